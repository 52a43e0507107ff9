//go:build !unix

package server

// peerClosed: without MSG_PEEK the blocked client's goroutine finds out
// from its next read (see peer_unix.go).
func (cl *client) peerClosed(peek bool) bool { return false }
