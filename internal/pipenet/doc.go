// Package pipenet is an in-process network for tests that run in a
// testing/synctest bubble: a listener whose connections are the server
// ends of net.Pipe pairs, and a DialContext that hands out the client
// ends.
//
// A real socket is never durably blocking, so a bubble whose goroutines
// wait on one never lets its clock run; everything here blocks on
// channels of the bubble instead. Serve an http.Server (or an
// httptest.Server whose Listener is the Network) on it and dial it with an
// http.Transport whose DialContext is the Network's; whatever address is
// dialled reaches this one listener.
package pipenet
