//go:build !unix

package sqlstore_test

import "time"

// cpuTime returns 0: getrusage is for Unix systems only.
func cpuTime() time.Duration { return 0 }
