package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// planAttrs are the attributes of a plan node that make it the plan it is: what the node
// does (type, operation, strategy, join type, scan direction), on what (relation, index,
// function, CTE) and under which conditions (filters, index, join and recheck conditions,
// keys). Every other attribute (estimates and costs, flags a version adds such as
// PostgreSQL 14's "Async Capable", "Parallel Aware", "Inner Unique", aliases, widths,
// MariaDB's rows, filtered and cost) is left out of the comparison: a newer version that
// adds or drops one does not change the plan. PostgreSQL's names, then MariaDB's.
var planAttrs = []string{
	"Node Type", "Operation", "Strategy", "Partial Mode", "Join Type", "Scan Direction", "Command",
	"Relation Name", "Schema", "Index Name", "Function Name", "CTE Name", "Subplan Name", "Parent Relationship",
	"Index Cond", "Recheck Cond", "TID Cond", "Filter", "Join Filter", "Hash Cond", "Merge Cond", "One-Time Filter",
	"Run Condition", "Order By", "Sort Key", "Group Key", "Grouping Sets", "Cache Key", "Conflict Resolution",
	"Conflict Arbiter Indexes", "Conflict Filter",
	"table_name", "access_type", "key", "used_key_parts", "ref", "index", "attached_condition", "index_condition",
	"using_index", "join_type", "sort_key",
}

// planConds are the attributes of planAttrs that are conditions: their parameters and
// constants are masked (maskValues).
var planConds = []string{"Index Cond", "Recheck Cond", "TID Cond", "Filter", "Join Filter", "Hash Cond", "Merge Cond",
	"One-Time Filter", "Run Condition", "Order By", "Conflict Filter", "attached_condition", "index_condition"}

// valueRE finds a condition's values: an array of parameters (a generic plan's
// ARRAY[$1, $2]), a parameter ($1), a quoted constant ('100', '{1,2}', 'x”y', a custom
// plan's values) or a number, each with any casts after it (::bigint,
// ::timestamp without time zone, ::bigint[]).
var valueRE = regexp.MustCompile(`(?:ARRAY\[[^\]]*\]|\$[0-9]+|'(?:[^']|'')*'|\b[0-9]+(?:\.[0-9]+)?\b)` +
	`(?:::(?:"[^"]+"|[a-z_][a-z0-9_]*(?: (?:with|without) time zone| varying| precision)?)(?:\[\])?)*`)

// maskValues is a condition with its values as "?": a generic plan's parameters and a
// custom plan's values (or two custom plans' values) compare equal, what the condition
// tests and on which columns does not.
func maskValues(cond string) string {
	return valueRE.ReplaceAllString(cond, "?")
}

// planNode is a plan's node as compared: its attributes of planAttrs (values as JSON
// text) and its children in order, each under the key that holds it (PostgreSQL's
// "Plans", MariaDB's "table", "nested_loop", …). Children that hold none of planAttrs at
// any depth are dropped (a version's added sections such as "Settings").
type planNode struct {
	attrs    map[string]string
	children []planChild
}

type planChild struct {
	key  string
	node *planNode
}

// subplanRE is the part of a PostgreSQL subplan's name that says what it returns, which
// versions spell differently ("InitPlan 1 (returns $0)", 17's "InitPlan 1").
var subplanRE = regexp.MustCompile(`^((?:InitPlan|SubPlan|CTE) \S+).*$`)

// decodePlan is a plan's tree as compared; nil when the JSON holds nothing compared.
func decodePlan(v any) *planNode {
	switch t := v.(type) {
	case map[string]any:
		n := &planNode{attrs: map[string]string{}}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			x := t[k]
			if slices.Contains(planAttrs, k) {
				if a, ok := planAttr(k, x); ok {
					n.attrs[k] = a
				}
				continue
			}
			switch x.(type) {
			case map[string]any:
				if c := decodePlan(x); c != nil {
					n.children = append(n.children, planChild{key: k, node: c})
				}
			case []any:
				for _, e := range x.([]any) {
					if c := decodePlan(e); c != nil {
						n.children = append(n.children, planChild{key: k, node: c})
					}
				}
			}
		}
		if len(n.attrs) == 0 && len(n.children) == 0 {
			return nil
		}
		// A map that only holds one node (PostgreSQL's {"Plan": …}, MariaDB's
		// {"query_block": …}) is that node: wrappers a version adds or drops do not count.
		if len(n.attrs) == 0 && len(n.children) == 1 {
			return n.children[0].node
		}
		return n
	case []any:
		var kids []planChild
		for _, e := range t {
			if c := decodePlan(e); c != nil {
				kids = append(kids, planChild{node: c})
			}
		}
		switch len(kids) {
		case 0:
			return nil
		case 1:
			return kids[0].node
		}
		return &planNode{attrs: map[string]string{}, children: kids}
	}
	return nil
}

// planAttr is an attribute's value as compared, normalized where versions spell the same
// plan differently; false when it says nothing about the plan.
func planAttr(k string, v any) (string, bool) {
	switch k {
	case "Parent Relationship":
		// Outer, Inner, Member, Subquery follow from the node's place among its parent's
		// children (14 made ModifyTable's "Member" child its "Outer" one); a subplan's kind
		// does not.
		if s, _ := v.(string); s == "InitPlan" || s == "SubPlan" {
			return s, true
		}
		return "", false
	case "Subplan Name":
		s, _ := v.(string)
		return subplanRE.ReplaceAllString(s, "$1"), true
	}
	if s, ok := v.(string); ok && slices.Contains(planConds, k) {
		v = maskValues(s)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // conditions read "(a >= ?)", not "(a \u003e= ?)"
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

// label names a node for a reader: its type or access and what it reads.
func (n *planNode) label() string {
	var parts []string
	for _, k := range []string{"Node Type", "Operation", "Join Type", "Relation Name", "Index Name", "table_name", "access_type", "key"} {
		if s, ok := n.attrs[k]; ok {
			var v string
			if json.Unmarshal([]byte(s), &v) == nil && v != "" {
				parts = append(parts, v)
			}
		}
	}
	if len(parts) == 0 {
		return "(node)"
	}
	return strings.Join(parts, " ")
}

// PlanDifference is where two plans differ first, walking both trees in order.
type PlanDifference struct {
	// Path names the nodes from the root to the one that differs ("ModifyTable Delete pi1 ›
	// Nested Loop Inner"), its last element the node itself.
	Path string
	// What says how: an attribute and its two values ("Index Name: \"pi1_pkey\" → absent"),
	// or children in one plan only.
	What string
}

func (d PlanDifference) String() string {
	if d.Path == "" {
		return d.What
	}
	return d.Path + ": " + d.What
}

// ComparePlans says whether two plans (EXPLAIN's JSON, PostgreSQL's or MariaDB's) are the
// same plan: the same tree of nodes with the same planAttrs. When not, the first
// difference. Plans that are not JSON compare as text, line by line.
func ComparePlans(a, b string) (PlanDifference, bool) {
	var ja, jb any
	if json.Unmarshal([]byte(a), &ja) != nil || json.Unmarshal([]byte(b), &jb) != nil {
		la, lb := strings.Split(strings.TrimSpace(a), "\n"), strings.Split(strings.TrimSpace(b), "\n")
		for i := range max(len(la), len(lb)) {
			x, y := "", ""
			if i < len(la) {
				x = strings.TrimSpace(la[i])
			}
			if i < len(lb) {
				y = strings.TrimSpace(lb[i])
			}
			if x != y {
				return PlanDifference{What: fmt.Sprintf("line %d: %q → %q", i+1, x, y)}, false
			}
		}
		return PlanDifference{}, true
	}
	return diffNodes(decodePlan(ja), decodePlan(jb), nil)
}

// SamePlan says two plans are the same plan (ComparePlans).
func SamePlan(a, b string) bool {
	_, same := ComparePlans(a, b)
	return same
}

// diffNodes is the first difference of two subtrees, path the labels above them.
func diffNodes(a, b *planNode, path []string) (PlanDifference, bool) {
	switch {
	case a == nil && b == nil:
		return PlanDifference{}, true
	case a == nil || b == nil:
		return PlanDifference{Path: strings.Join(path, " › "), What: "one plan is empty"}, false
	}
	here := append(slices.Clip(path), a.label())
	where := strings.Join(here, " › ")
	if a.attrs["Node Type"] != b.attrs["Node Type"] {
		return PlanDifference{Path: strings.Join(path, " › "), What: fmt.Sprintf("%s → %s", a.label(), b.label())}, false
	}
	keys := map[string]bool{}
	for k := range a.attrs {
		keys[k] = true
	}
	for k := range b.attrs {
		keys[k] = true
	}
	for _, k := range planAttrs {
		if !keys[k] {
			continue
		}
		x, okx := a.attrs[k]
		y, oky := b.attrs[k]
		if okx && oky && x == y {
			continue
		}
		if !okx {
			x = "absent"
		}
		if !oky {
			y = "absent"
		}
		return PlanDifference{Path: where, What: fmt.Sprintf("%s: %s → %s", k, x, y)}, false
	}
	for i := range max(len(a.children), len(b.children)) {
		switch {
		case i >= len(a.children):
			return PlanDifference{Path: where, What: "a child only in the new plan: " + b.children[i].node.label()}, false
		case i >= len(b.children):
			return PlanDifference{Path: where, What: "a child only in the base plan: " + a.children[i].node.label()}, false
		}
		if d, same := diffNodes(a.children[i].node, b.children[i].node, here); !same {
			return d, false
		}
	}
	return PlanDifference{}, true
}
