package workload

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// FlagSet is the flag set a workload's Params.AddFlags registers its flags on (with
// ParamsBase.BindFlags).
type FlagSet = pflag.FlagSet

// Flags are a workload's own flags, each bound to the parameter it sets (and stores:
// Stored). Params.AddFlags
// registers them on the command's flag set with NewFlags and the typed methods (each
// takes the parameter, then pflag's name, default and help text); Params.Resolve, once
// the scale's preset is applied (ApplyScale), calls Apply, which sets the parameter of
// every flag the user gave. A flag not given leaves its parameter as the preset has it,
// whatever the flag's default says: --help shows the default, the preset decides.
type Flags struct {
	fs    *pflag.FlagSet
	binds []binding
}

// binding is one flag: its name, how its value reaches its parameter, and its
// parameter's stored key and value (Stored).
type binding struct {
	name  string
	apply func() error
	key   string
	value func() any
}

// NewFlags returns the flags to register on fs.
func NewFlags(fs *pflag.FlagSet) *Flags { return &Flags{fs: fs} }

// bind records that flag name, once given, sets its parameter with apply; the parameter
// is stored as key, its value what value returns.
func (f *Flags) bind(name string, apply func() error, key string, value func() any) {
	f.binds = append(f.binds, binding{name: name, apply: apply, key: key, value: value})
}

// bindVar registers flag name with reg (one of pflag's typed …Var methods), its value
// bound to dst through conv (a copy, for slices and maps); dst is stored under the
// flag's name (storedKey).
func bindVar[T any](f *Flags, reg func(*T, string, T, string), dst *T, name string, def T, usage string, conv func(T) T) {
	v := new(T)
	reg(v, name, def, usage)
	f.bind(name, func() error {
		*dst = conv(*v)
		return nil
	}, storedKey(name), func() any { return *dst })
}

// storedKey is the key a flag's parameter is stored under: the flag's name with
// underscores for its dashes (--table-size: table_size).
func storedKey(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

func same[T any](v T) T { return v }

// Int is an int flag setting *dst.
func (f *Flags) Int(dst *int, name string, def int, usage string) {
	bindVar(f, f.fs.IntVar, dst, name, def, usage, same)
}

// Int64 is an int64 flag setting *dst.
func (f *Flags) Int64(dst *int64, name string, def int64, usage string) {
	bindVar(f, f.fs.Int64Var, dst, name, def, usage, same)
}

// Float64 is a float64 flag setting *dst.
func (f *Flags) Float64(dst *float64, name string, def float64, usage string) {
	bindVar(f, f.fs.Float64Var, dst, name, def, usage, same)
}

// Seconds is a flag of seconds (a float64, 0 by default) setting the duration *dst
// (Seconds converts it); it is stored in seconds, under its name and _sec
// (--cleanup-wait: cleanup_wait_sec).
func (f *Flags) Seconds(dst *time.Duration, name, usage string) {
	v := new(float64)
	f.fs.Float64Var(v, name, 0, usage)
	f.bind(name, func() error {
		*dst = Seconds(*v)
		return nil
	}, storedKey(name)+"_sec", func() any { return dst.Seconds() })
}

// Bool is a bool flag setting *dst.
func (f *Flags) Bool(dst *bool, name string, def bool, usage string) {
	bindVar(f, f.fs.BoolVar, dst, name, def, usage, same)
}

// String is a string flag setting *dst.
func (f *Flags) String(dst *string, name, def, usage string) {
	bindVar(f, f.fs.StringVar, dst, name, def, usage, same)
}

// IntSlice is a flag of ints (1,4,16) setting *dst to a copy of them.
func (f *Flags) IntSlice(dst *[]int, name string, def []int, usage string) {
	bindVar(f, f.fs.IntSliceVar, dst, name, def, usage, slices.Clone)
}

// Parsed is a string flag setting *dst to what parse makes of it. A value parse refuses
// leaves *dst as it was and is a problem of Apply, parse's error saying why.
func (f *Flags) Parsed(dst *int64, name, def, usage string, parse func(string) (int64, error)) {
	v := new(string)
	f.fs.StringVar(v, name, def, usage)
	f.bind(name, func() error {
		n, err := parse(*v)
		if err != nil {
			return badValue{flag: name, value: *v, why: err}
		}
		*dst = n
		return nil
	}, storedKey(name), func() any { return *dst })
}

// StringSlice is a flag of strings (a,b) setting *dst to a copy of them.
func (f *Flags) StringSlice(dst *[]string, name string, def []string, usage string) {
	bindVar(f, f.fs.StringSliceVar, dst, name, def, usage, slices.Clone)
}

// StringArrayP is a repeatable flag with a one-letter shorthand (-f A -f B), setting
// *dst to its values in order, commas kept (pgbench's -f FILE@WEIGHT).
func (f *Flags) StringArrayP(dst *[]string, name, shorthand, usage string) {
	reg := func(p *[]string, name string, def []string, usage string) {
		f.fs.StringArrayVarP(p, name, shorthand, def, usage)
	}
	bindVar(f, reg, dst, name, nil, usage, slices.Clone)
}

// StringToInt is a flag of key=int pairs (a=1,b=2) setting *dst to a copy of them.
func (f *Flags) StringToInt(dst *map[string]int, name string, def map[string]int, usage string) {
	bindVar(f, f.fs.StringToIntVar, dst, name, def, usage, maps.Clone)
}

// Apply sets the parameter of every flag given (set reports whether it was: the
// command's Changed), in the order the flags were registered, and returns the problems
// of values their parameter refuses, one a line: `--flag "value": why`. A nil Flags has
// no flags.
func (f *Flags) Apply(set func(flag string) bool) error {
	return f.ApplyAs(set, func(flag, value string, why error) error {
		return fmt.Errorf("--%s %q: %w", flag, value, why)
	})
}

// ApplyAs is Apply with the problem of a refused value made by bad: for values that
// come from elsewhere than the command line (a profile's "option = value" lines).
func (f *Flags) ApplyAs(set func(flag string) bool, bad func(flag, value string, why error) error) error {
	if f == nil {
		return nil
	}
	var errs []error
	for _, b := range f.binds {
		if !set(b.name) {
			continue
		}
		var bv badValue
		if err := b.apply(); errors.As(err, &bv) {
			errs = append(errs, bad(bv.flag, bv.value, bv.why))
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// badValue is a flag's value its parameter refuses (Parsed), for Apply to word.
type badValue struct {
	flag, value string
	why         error
}

func (e badValue) Error() string { return fmt.Sprintf("--%s %q: %v", e.flag, e.value, e.why) }

// Seconds converts the seconds a flag gives into a duration; a value other than 0 never
// rounds to 0 (none), so that it is validated as given.
func Seconds(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	switch {
	case s > 0 && d == 0:
		d = 1
	case s < 0 && d == 0:
		d = -1
	}
	return d
}

// Stored is how a workload's Params.Stored is made: the scale, the parameter of each of
// the workload's own flags (AddFlags) under the flag's name, dashes as underscores (a
// duration in seconds, its key ending in _sec: --cleanup-wait is cleanup_wait_sec), and
// extra: the parameters no flag of the workload's sets (--time's) and derived values.
func Stored[PP interface {
	Params
	base() *ParamsBase
}](p PP, extra map[string]any) map[string]any {
	b := p.base()
	bound := b.flags
	p.AddFlags(pflag.NewFlagSet("stored", pflag.ContinueOnError)) // every flag, bound afresh
	flags := b.flags
	b.flags = bound
	out := map[string]any{"scale": b.Scale}
	for _, f := range flags.binds {
		out[f.key] = f.value()
	}
	maps.Copy(out, extra)
	return out
}
