// Package scripttest runs text scripts against a test harness, for the
// stateful parts of Samsa that are tested by what they answer to a sequence
// of commands (the group coordinator, the metadata image, the replication
// state machines). A script is a list of cases: '#' comment lines, one
// command line, optional input lines, a "----" line and the expected
// output, ended by a blank line. A test run with -update rewrites each
// script with the actual output, for review as a diff. It is imported by
// tests only.
package scripttest
