package metrics

// RoleOps is a role's own operations over a span (a step, or an interval): the work the
// actors of that role did, the denominator of the role's per-connection CPU per operation
// (ConnCPU). Each label carries the role of the actors that produced it, so it is the sum,
// over the labels whose Role is role, of their Count() in their unit — as PrimaryCount
// counts the primary label: rows for row labels (UnitRows: an insert or delete writer's
// rows, an index build's indexed rows), statements for the others (UnitOps: a query
// actor's queries, sysbench's statements, BEGIN and COMMIT included).
//
// unit is the unit the labels share. ok is false — the role has no operations of its own,
// and its CPU no per-op figure — when no label has the role (ConnCPUClientProcess, a
// connection the engine opened for work no actor timed), when the role's labels count in
// different units (rows and statements do not add up), or when they counted nothing.
func RoleOps(labels []LabelStats, role string) (ops int64, unit Unit, ok bool) {
	found := false
	for _, l := range labels {
		if l.Role != role || role == "" {
			continue
		}
		if found && l.Unit != unit {
			return 0, "", false
		}
		found, unit = true, l.Unit
		ops += l.Count()
	}
	if !found || ops <= 0 {
		return 0, "", false
	}
	return ops, unit, true
}
