// Package task starts goroutines that have an owner. A Group ties each
// goroutine to a context that is cancelled on Stop and a WaitGroup that Stop
// waits on, so nothing outlives the component that started it. Code in this
// project never uses a naked go statement outside this package.
package task
