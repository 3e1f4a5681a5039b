// Package version says which Samsa this binary is: the release stamped at
// build time (make build sets Version with -ldflags), else the module
// version Go recorded (go install ...@v1.2.3), else "(devel)"; Describe
// adds the commit, the Go version and the platform. It is a leaf: the
// broker logs the version at start-up and samsa --version prints it.
package version
