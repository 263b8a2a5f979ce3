// Package gcfloor gives the garbage collector a floor of headroom: the
// heap may grow by at least a set number of bytes over the live heap
// before a collection starts.
//
// Switchboard's live heap is small (a few megabytes on a server with
// little state) while each request allocates tens of kilobytes of JSON
// that is garbage at once. With Go's default (GOGC=100: collect when the
// heap has doubled) such a server collects dozens of times a second, and
// requests that arrive during a collection wait for it. A floor of a few
// tens of megabytes makes collections rare while the live heap is small,
// and changes nothing once the live heap is larger than the floor: memory
// use grows by the floor at most.
package gcfloor
