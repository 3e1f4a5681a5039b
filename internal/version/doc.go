// Package version says which Samsa this binary is: the version stamped at
// build time (make build sets Version with -ldflags), else what the Go
// toolchain recorded (the module version of `go install ...@v1.2.3`, or the
// VCS revision of a build from a checkout, marked dirty when the tree had
// changes). It is a leaf: the broker logs it at start-up and the CLI prints
// it.
package version
