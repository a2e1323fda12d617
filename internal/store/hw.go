package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/metrics"
)

// hwColumns are the columns of hwColumnsDDL, in the order of hwArgs and scanHW.
const hwColumns = `cpu_user_sec, cpu_nice_sec, cpu_system_sec, cpu_idle_sec, cpu_iowait_sec, cpu_irq_sec,
	cpu_softirq_sec, cpu_steal_sec, context_switches, io_devices, read_ops, read_bytes, write_ops, write_bytes,
	embedded, remote, server_processes, server_cpu_sec, server_peak_mem_bytes, server_read_bytes, server_write_bytes,
	client_processes, client_cpu_sec, client_peak_mem_bytes, client_read_bytes, client_write_bytes, cpu_elapsed_sec, cpu_tasks_sec`

const hwPlaceholders = `?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`

// hwArgs are h's values for hwColumns; what was not measured is NULL.
func hwArgs(h *metrics.HW) []any {
	var readOps, readBytes, writeOps, writeBytes any
	if h.IOKnown() {
		readOps, readBytes, writeOps, writeBytes = h.ReadOps, h.ReadBytes, h.WriteOps, h.WriteBytes
	}
	var srvN, srvCPU, srvMem, srvRead, srvWrite any
	if s := h.Server; s.Known {
		srvN, srvCPU, srvMem = s.Processes, s.CPUSec, s.PeakMemBytes
		if s.IOKnown {
			srvRead, srvWrite = s.ReadBytes, s.WriteBytes
		}
	}
	var cliRead, cliWrite any
	if h.Client.IOKnown {
		cliRead, cliWrite = h.Client.ReadBytes, h.Client.WriteBytes
	}
	c := h.CPU
	var elapsed, tasks any
	if c.ElapsedSec > 0 {
		elapsed = c.ElapsedSec
	}
	if c.TasksSec > 0 {
		tasks = c.TasksSec
	}
	return []any{
		c.UserSec, c.NiceSec, c.SystemSec, c.IdleSec, c.IOWaitSec, c.IRQSec, c.SoftIRQSec, c.StealSec,
		h.ContextSwitches, strings.Join(h.Devices, " "), readOps, readBytes, writeOps, writeBytes,
		h.Embedded, h.Remote, srvN, srvCPU, srvMem, srvRead, srvWrite,
		h.Client.Processes, h.Client.CPUSec, h.Client.PeakMemBytes, cliRead, cliWrite, elapsed, tasks,
	}
}

// scanHW scans hwColumns preceded by the given extra destinations.
func scanHW(rows *sql.Rows, extra ...any) (*metrics.HW, error) {
	h := &metrics.HW{}
	var devices string
	var readOps, readBytes, writeOps, writeBytes sql.NullInt64
	var srvN, srvMem, srvRead, srvWrite, cliRead, cliWrite sql.NullInt64
	var srvCPU, elapsed, tasks sql.NullFloat64
	var cliMem int64
	c := &h.CPU
	dest := append(extra,
		&c.UserSec, &c.NiceSec, &c.SystemSec, &c.IdleSec, &c.IOWaitSec, &c.IRQSec, &c.SoftIRQSec, &c.StealSec,
		&h.ContextSwitches, &devices, &readOps, &readBytes, &writeOps, &writeBytes,
		&h.Embedded, &h.Remote, &srvN, &srvCPU, &srvMem, &srvRead, &srvWrite,
		&h.Client.Processes, &h.Client.CPUSec, &cliMem, &cliRead, &cliWrite, &elapsed, &tasks)
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	c.ElapsedSec, c.TasksSec = elapsed.Float64, tasks.Float64
	if devices != "" {
		h.Devices = strings.Fields(devices)
		h.ReadOps, h.ReadBytes = uint64(readOps.Int64), uint64(readBytes.Int64)
		h.WriteOps, h.WriteBytes = uint64(writeOps.Int64), uint64(writeBytes.Int64)
	}
	if srvN.Valid {
		h.Server = metrics.ProcHW{Known: true, Processes: int(srvN.Int64), CPUSec: srvCPU.Float64,
			PeakMemBytes: uint64(srvMem.Int64), IOKnown: srvRead.Valid,
			ReadBytes: uint64(srvRead.Int64), WriteBytes: uint64(srvWrite.Int64)}
	}
	h.Client.Known = true
	h.Client.PeakMemBytes = uint64(cliMem)
	h.Client.IOKnown, h.Client.ReadBytes, h.Client.WriteBytes = cliRead.Valid, uint64(cliRead.Int64), uint64(cliWrite.Int64)
	return h, nil
}

// writeStepHW replaces a step's HW, per-connection CPU and metrics rows.
func writeStepHW(ctx context.Context, tx sqlTx, stepID int64, r metrics.StepResult) error {
	for _, table := range []string{"step_hw", "step_conn_cpu", "step_metrics"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE step_id = ?`, stepID); err != nil {
			return err
		}
	}
	if r.HW != nil {
		args := append([]any{stepID}, hwArgs(r.HW)...)
		if _, err := tx.ExecContext(ctx, `INSERT INTO step_hw (step_id, `+hwColumns+`) VALUES (?, `+hwPlaceholders+`)`, args...); err != nil {
			return fmt.Errorf("hw: %w", err)
		}
	}
	for _, c := range r.ConnCPU {
		if _, err := tx.ExecContext(ctx, `INSERT INTO step_conn_cpu (step_id, role, sessions, cpu_sec) VALUES (?, ?, ?, ?)`,
			stepID, c.Role, c.Sessions, c.CPUSec); err != nil {
			return fmt.Errorf("connection CPU of %s: %w", c.Role, err)
		}
	}
	for name, v := range r.Metrics {
		if _, err := tx.ExecContext(ctx, `INSERT INTO step_metrics (step_id, name, value) VALUES (?, ?, ?)`, stepID, name, v); err != nil {
			return fmt.Errorf("metric %s: %w", name, err)
		}
	}
	return nil
}
