// Package clock is the time seam: logic asks a Clock for the time instead of
// calling time.Now, so tests can move time by hand.
package clock
