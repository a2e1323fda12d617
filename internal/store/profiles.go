package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"strings"
)

// StepProfile is one role's CPU profile of a step (schema 9): perf's samples of the role's
// processes or threads during the step's load, folded.
type StepProfile struct {
	Role string
	// Event is the event perf sampled (cycles, or cpu-clock where the machine has no
	// hardware counters; "" when unknown) and Hz its rate per CPU: Samples / Hz are the
	// role's CPU seconds.
	Event string
	Hz    int
	// Samples is the role's sample count, Stacks its distinct stacks.
	Samples int64
	Stacks  int64
	// Folded is the folded text ("frame;frame;frame count" a line, root first),
	// gzip-compressed (CompressFolded); FoldedText reads it.
	Folded []byte
}

// MaxFoldedBytes bounds a profile's folded text: CompressFolded refuses more, and
// FoldedText reads no more.
const MaxFoldedBytes = 64 << 20

// CompressFolded is folded text as StepProfile.Folded keeps it.
func CompressFolded(text []byte) ([]byte, error) {
	if len(text) > MaxFoldedBytes {
		return nil, fmt.Errorf("folded profile of %d bytes: over %d", len(text), MaxFoldedBytes)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(text); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// FoldedText is the profile's folded text, uncompressed.
func (p StepProfile) FoldedText() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(p.Folded))
	if err != nil {
		return nil, fmt.Errorf("profile of %s: %w", p.Role, err)
	}
	defer zr.Close()
	b, err := io.ReadAll(io.LimitReader(zr, MaxFoldedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("profile of %s: %w", p.Role, err)
	}
	if len(b) > MaxFoldedBytes {
		return nil, fmt.Errorf("profile of %s: over %d bytes", p.Role, MaxFoldedBytes)
	}
	return b, nil
}

// PutStepProfiles stores a step's CPU profiles, replacing those an earlier call stored.
func (s *Store) PutStepProfiles(ctx context.Context, stepID int64, profiles []StepProfile) error {
	err := s.inTx(ctx, func(tx sqlTx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM step_profiles WHERE step_id = ?`, stepID); err != nil {
			return err
		}
		for _, p := range profiles {
			if _, err := tx.ExecContext(ctx, `INSERT INTO step_profiles (step_id, role, event, hz, samples, stacks, folded) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				stepID, p.Role, p.Event, p.Hz, p.Samples, p.Stacks, p.Folded); err != nil {
				return fmt.Errorf("role %s: %w", p.Role, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: step %d profiles: %w", stepID, err)
	}
	return nil
}

// readProfiles reads the steps' profiles (bulk.read).
func (b *bulk) readProfiles() error {
	err := b.query("profiles", `SELECT step_id, role, event, hz, samples, stacks, folded FROM step_profiles WHERE step_id IN `+b.s.stepsOf(),
		func(rows *sql.Rows) error {
			var stepID int64
			var p StepProfile
			if err := rows.Scan(&stepID, &p.Role, &p.Event, &p.Hz, &p.Samples, &p.Stacks, &p.Folded); err != nil {
				return err
			}
			st, err := b.step(stepID)
			if err != nil {
				return err
			}
			st.Profiles = append(st.Profiles, p)
			return nil
		})
	if err != nil {
		return err
	}
	for _, st := range b.steps {
		slices.SortFunc(st.Profiles, func(a, b StepProfile) int { return strings.Compare(a.Role, b.Role) })
	}
	return nil
}
