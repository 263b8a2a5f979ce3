// Package fulldisk gives tests a real file system that fills up: a tmpfs
// of a few MiB mounted in a temporary directory, and a filler file that
// takes its room away and gives it back. Mounting needs root on Linux (as
// CI runs); elsewhere the tests that use it skip, saying why.
package fulldisk
