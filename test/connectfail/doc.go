// Package connectfail kills Connect workers mid-stream: three `samsa
// connect` processes in one group on a real Samsa broker, a source and a
// sink connector moving FileStream lines, one worker killed (SIGKILL)
// while it runs a task; the test checks that the task moves to a survivor,
// nothing acknowledged is lost, duplicates appear only where at-least-once
// allows them, and none with exactly-once sources. Tests only.
package connectfail
