package workload

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbperf/dbperf/internal/config"
)

// kitParams are a workload's Params built from the kit alone.
type kitParams struct {
	ParamsBase
	N       int
	Wait    time.Duration
	Size    int64
	List    []int
	Derived string
}

func (p *kitParams) AddFlags(fl *FlagSet) {
	f := p.BindFlags(fl)
	f.Int(&p.N, "n", 1, "a count")
	f.Seconds(&p.Wait, "cleanup-wait", "seconds")
	f.Parsed(&p.Size, "size", "", "bytes", func(s string) (int64, error) {
		if s == "big" {
			return 1 << 30, nil
		}
		return 0, errors.New("not a size")
	})
	f.IntSlice(&p.List, "list", []int{1}, "counts")
}

func (p *kitParams) Resolve(cfg *config.Run, set func(string) bool) error {
	var pr Problems
	pr.Join(ApplyScale(p, cfg, kitPreset))
	pr.Join(p.ApplyFlags(set))
	pr.Join(p.Validate(cfg))
	return pr.Err()
}

func (p *kitParams) Validate(*config.Run) error {
	var pr Problems
	if p.N < 1 {
		pr.Add("--n must be at least 1, got %d", p.N)
	}
	return pr.Err()
}

func (p *kitParams) Stored() map[string]any { return Stored(p, map[string]any{"derived": p.Derived}) }

func kitPreset(scale string) (*kitParams, error) {
	p := &kitParams{ParamsBase: ParamsBase{Scale: scale}, N: 10, List: []int{1}, Derived: "d"}
	switch scale {
	case "tiny", "small", "medium":
	case "large":
		p.N = 1000
	default:
		return p, StandardScales().Unknown(scale)
	}
	return p, nil
}

// resolveKit parses args on a fresh flag set and resolves them.
func resolveKit(t *testing.T, cfg *config.Run, args ...string) (*kitParams, error) {
	t.Helper()
	fs := pflag.NewFlagSet("kit", pflag.ContinueOnError)
	p := &kitParams{}
	p.AddFlags(fs)
	fs.IntVar(&cfg.Clients, "clients", 1, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return p, p.Resolve(cfg, fs.Changed)
}

// A flag not given leaves the preset's value, whatever its default; a given one sets its
// parameter; the flags stay bound across the preset; Stored has every flag's parameter.
func TestFlagsOverPreset(t *testing.T) {
	p, err := resolveKit(t, &config.Run{Scale: "large"})
	if err != nil || p.N != 1000 || p.Scale != "large" || p.ReportInterval() != 5*time.Second {
		t.Fatalf("preset: %+v, %v", p, err)
	}
	p, err = resolveKit(t, &config.Run{}, "--n", "3", "--cleanup-wait", "1e-10", "--size", "big", "--list", "2,4")
	if err != nil || p.N != 3 || p.Wait != 1 || p.Size != 1<<30 || !reflect.DeepEqual(p.List, []int{2, 4}) || p.Scale != "small" {
		t.Fatalf("flags: %+v, %v", p, err)
	}
	if p.ReportInterval() != time.Second {
		t.Errorf("small's report interval %v", p.ReportInterval())
	}
	got := p.Stored()
	want := map[string]any{"scale": "small", "n": 3, "cleanup_wait_sec": 1e-9, "size": int64(1 << 30), "list": []int{2, 4}, "derived": "d"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored %v, want %v", got, want)
	}
	if err := p.ApplyFlags(func(string) bool { return true }); err != nil {
		t.Errorf("the flags are no longer bound after Stored: %v", err)
	}
}

// Every problem at once, one line each: an unknown scale (the default's preset applied),
// a value its parser refuses (the preset's value kept), a validation.
func TestProblemsAtOnce(t *testing.T) {
	p, err := resolveKit(t, &config.Run{Scale: "huge"}, "--size", "lots", "--n", "0")
	want := []string{
		`--scale: unknown scale "huge": use one of tiny, small, medium, large`,
		`--size "lots": not a size`,
		"--n must be at least 1, got 0",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	if p.Scale != "small" || p.Size != 0 {
		t.Errorf("after the problems: %+v", p)
	}
}

func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want time.Duration
	}{{0, 0}, {1.5, 1500 * time.Millisecond}, {1e-10, 1}, {-1e-10, -1}, {-2, -2 * time.Second}} {
		if got := Seconds(c.s); got != c.want {
			t.Errorf("Seconds(%g) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestThreads(t *testing.T) {
	set := func(given ...string) func(string) bool {
		return func(f string) bool { return strings.Contains(" "+strings.Join(given, " ")+" ", " "+f+" ") }
	}
	one := func(n int) int { return n }
	cfg := &config.Run{Clients: 4}
	threads := 9 // as Flags.Apply left it
	if err := Threads(set("threads", "clients"), cfg, &threads, 2, one); err == nil || threads != 2 ||
		err.Error() != "--threads and --clients both given: --clients 4 is --threads 4; give one" {
		t.Errorf("both: %d, %v", threads, err)
	}
	threads = 2
	if err := Threads(set("clients"), cfg, &threads, 2, one); err != nil || threads != 4 {
		t.Errorf("--clients: %d, %v", threads, err)
	}
	threads = 9
	if err := Threads(set("threads"), cfg, &threads, 2, one); err != nil || threads != 9 {
		t.Errorf("--threads: %d, %v", threads, err)
	}
}

func TestProblemsSteps(t *testing.T) {
	var pr Problems
	cfg := &config.Run{Steps: []string{"b", "x", "b"}}
	pr.Steps(cfg, []string{"a", "b"}, "kit has")
	pr.NeedsData(cfg, "a", "the tables a creates", true)
	want := `--steps: unknown step "x": kit has a,b` + "\n" +
		`--steps: step "b" is listed twice` + "\n" +
		"--steps b,x,b needs the tables a creates: add a to --steps, or pass --workdir DIR holding a database kept with --keep (or --dsn, a server holding them)"
	if err := pr.Err(); err == nil || err.Error() != want {
		t.Errorf("problems:\n%v\nwant:\n%s", err, want)
	}
	for _, c := range []*config.Run{
		{Steps: []string{"b"}, WorkDir: "/kept"},
		{Steps: []string{"b"}, DSN: "postgres://x"},
		{Steps: []string{"a", "b"}},
		{},
	} {
		var pr Problems
		pr.NeedsData(c, "a", "the tables a creates", true)
		if pr.Err() != nil {
			t.Errorf("%+v: %v", c, pr.Err())
		}
	}
	var kv Problems
	kv.NeedsData(&config.Run{Steps: []string{"b"}, DSN: "postgres://x"}, "a", "the keys a writes", false)
	if err := kv.Err(); err == nil || strings.Contains(err.Error(), "--dsn") {
		t.Errorf("a key-value workload with --dsn: %v", err)
	}
}

func TestPlanParams(t *testing.T) {
	p, _ := kitPreset("tiny")
	if _, err := PlanParams[*kitParams]("kit", nil, p); err == nil || err.Error() != "kit plan: no configuration" {
		t.Errorf("nil config: %v", err)
	}
	for _, params := range []Params{nil, (*kitParams)(nil)} {
		if _, err := PlanParams[*kitParams]("kit", &config.Run{}, params); err == nil ||
			!strings.HasSuffix(err.Error(), "want *workload.kitParams") {
			t.Errorf("%T: %v", params, err)
		}
	}
	p.N = 0
	if _, err := PlanParams[*kitParams]("kit", &config.Run{}, p); err == nil || !strings.Contains(err.Error(), "--n must be") {
		t.Errorf("not validated: %v", err)
	}
	p.N = 1
	if got, err := PlanParams[*kitParams]("kit", &config.Run{}, p); err != nil || got != p {
		t.Errorf("valid: %v, %v", got, err)
	}
}
