// Package testwait waits in tests for a condition to hold, on the real
// clock, for code that runs on real sockets and processes where
// testing/synctest cannot be used.
//
// A test that waits for something asynchronous polls for it with For (or
// ForErr) rather than sleeping and then asserting: the wait ends as soon as
// the condition holds, and fails the test only when it has not held for
// Timeout, a bound far above what any condition here needs on a loaded
// machine. Polling starts fast and slows down (to pollMax), so that a
// condition that reads a rate-limited API is not hammered.
//
// Checking that something did NOT happen cannot be done by waiting: wait
// instead for a positive sign that the component has had its chance (a
// claim made at the new time of a fake clock, a poll counter that moved),
// then assert that nothing happened; or run the code in a
// testing/synctest bubble, where synctest.Wait makes the check exact.
//
// Inside a bubble, Advance moves the bubble's clock on and waits until the
// bubble is idle: the one way these tests let fake time pass, so that a
// check after it never races what fell due.
package testwait
