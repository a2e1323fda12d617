package sweep

// The duet's placements (--duet-placement): where each point's clients and server run.
//
// PlacementPoint gives each point a CPU set of its own, its clients and its server on it
// (DuetCPUs' n sets). Each point's round trip then never crosses CPUs, but the ratio of
// the points is also the ratio of their CPUs' speeds, and on a shared host a vCPU's speed
// (its steal, its interrupts, its sibling's load) varies on its own from second to second:
// the duet's premise, both points slowed by the same seconds, holds for what the two CPUs
// share and fails for what each suffers alone. CPUAssignment's counterbalancing takes out
// the CPUs' constant difference, not that drift.
//
// PlacementRole gives every point the same two sets: all the points' clients on one,
// all their servers on the other, the two sets swapped between blocks by CPUAssignment's
// counterbalanced draw. A CPU slowed for a second then slows every point's clients (or
// every server) in the same second, and its share leaves the ratio; each point's round
// trip crosses CPUs, as a client on another host's does. A server engine only: an
// embedded engine runs in its clients' threads.
const (
	PlacementPoint = "point"
	PlacementRole  = "role"
)

// Placements are the values of --duet-placement.
func Placements() []string { return []string{PlacementPoint, PlacementRole} }
