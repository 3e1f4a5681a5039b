// Package freeport picks loopback TCP ports for configurations that must
// name a port before the process that binds it starts: a quorum's
// controller.quorum.voters, a dev cluster's listeners, a test's nodes.
//
// It picks below (or above) the kernel's ephemeral range: a port the kernel
// handed out for :0 is free only until the kernel hands it out again, as
// the local end of some other program's outgoing connection or as another
// test's :0 listener, and on a busy machine that happens within seconds.
// Ports outside the range are never handed out by the kernel, so only
// another explicit picker can take one, and pickers start at random places.
package freeport
