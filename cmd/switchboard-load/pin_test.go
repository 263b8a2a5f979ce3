package main

import "testing"

func TestCPUList(t *testing.T) {
	for _, tt := range []struct {
		cpus []int
		want string
	}{
		{[]int{1}, "1"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 1, 2, 3, 6}, "0-3,6"},
		{[]int{0, 2, 4, 5}, "0,2,4-5"},
	} {
		if got := cpuList(tt.cpus); got != tt.want {
			t.Errorf("cpuList(%v) = %q, want %q", tt.cpus, got, tt.want)
		}
	}
}
