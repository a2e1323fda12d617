// Package faulttest holds the fault matrix (issue 40, matrix_test.go): for each managed
// topology, dbperf run with one process role killed with SIGKILL in a load step and in a
// timed step, each cell checked to end within its bound with the step failed and named,
// nothing left running and nothing stored as ok that was not measured whole. It has no
// code of its own beyond the test.
package faulttest
