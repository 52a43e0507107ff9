package main

import "testing"

// --pprof refuses addresses other than loopback ones.
func TestPprofLoopbackOnly(t *testing.T) {
	for _, a := range []string{"0.0.0.0:0", ":0", "10.1.2.3:6060", "example.com:6060", "nonsense"} {
		if err := servePprof(a); err == nil {
			t.Errorf("servePprof(%q) accepted a non-loopback address", a)
		}
	}
	if err := servePprof("127.0.0.1:0"); err != nil {
		t.Errorf("servePprof(127.0.0.1:0): %v", err)
	}
}
