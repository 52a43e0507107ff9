package main

import (
	"testing"

	"limitdb/server"
)

// TestShippedConfig: the example limitdb.conf (used by the Docker image)
// loads without error.
func TestShippedConfig(t *testing.T) {
	s := server.New(server.Config{}, nil)
	if err := s.LoadConfig("../../limitdb.conf", ""); err != nil {
		t.Fatal(err)
	}
}
