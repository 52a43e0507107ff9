package server

import (
	"bytes"
	"net"
	"strconv"
	"sync/atomic"

	"limitdb/door"
	"limitdb/engine"
	"limitdb/procs"
	"limitdb/resp"
)

// SYNC: the old replication handshake, enough for a client that reads
// Redis's replication stream (Redis's test suite attaches to it to check
// what a command propagates): the data set as an RDB bulk, then every
// unit's effects as the door records them (the effect stream is Redis's
// propagation, engine/effects.go), with SELECT where the database
// changes. limitdb has no replicas: nothing is acknowledged, no PINGs are
// sent, and a connection that stops reading is dropped.
var syncCmd = &engine.Command{Name: "sync", Arity: 1, Flags: "admin noscript no_async_loading no_multi", Group: "server", Since: "1.0.0", Summary: "Internal command used for replication"}

func init() {
	registerConn(syncCmd, cmdSync)
}

// syncBacklog bounds the records queued for one SYNC reader: one that
// falls further behind is dropped, as Redis drops a replica past its
// output buffer limit.
const syncBacklog = 4096

// syncTee is the door's log while SYNC readers exist: each unit's effects
// go to the log it wraps (the cluster's proposer, or none) and, encoded
// as a record, to every reader. Its fields are guarded by the engine lock
// (Record and Flush run under it).
type syncTee struct {
	queued  *atomic.Int64 // bytes sent to the readers' queues not yet written (serverStats.replQueued)
	inner   door.Log
	readers map[*syncReader]struct{}
	rec     []byte // the record being sent (reused)
}

type syncReader struct {
	ch chan []byte
	db int // the reader's selected database; -1 before the first SELECT
}

// Record is door.Log's.
func (t *syncTee) Record(f *engine.Effects, clockMs int64) {
	if t.inner != nil {
		t.inner.Record(f, clockMs)
	}
	if len(t.readers) == 0 {
		return
	}
	t.rec = engine.AppendRecord(t.rec[:0], f, clockMs)
	for r := range t.readers {
		out, ok := r.stream(t.rec)
		if !ok || len(out) == 0 {
			continue
		}
		select {
		case r.ch <- out:
			t.queued.Add(int64(len(out)))
		default: // too far behind: its writer closes the connection
			delete(t.readers, r)
			close(r.ch)
		}
	}
}

// Flush is door.Log's.
func (t *syncTee) Flush() {
	if t.inner != nil {
		t.inner.Flush()
	}
}

// limitdbOnly names the effects Redis does not propagate (the script cache
// and settings limitdb replicates, its native limiters' RL.SET, its policy
// registry's LIMITDB.POLICY, slot ownership's LIMITDB.SLOTS, the directory's LIMITDB.DIRECTORY): a replication
// stream reader expects Redis's.
var limitdbOnly = map[string]bool{"script": true, "config": true, "acl": true, "rl.set": true, "limitdb.policy": true, "limitdb.slots": true, "limitdb.directory": true}

// stream turns a record into the bytes a reader gets: SELECT when the
// record's database is not the reader's, then its commands without the
// limitdb-only ones.
func (r *syncReader) stream(rec []byte) ([]byte, bool) {
	h, body, err := engine.ParseRecordHeader(rec)
	if err != nil {
		return nil, false
	}
	var out []byte
	if h.DB != r.db {
		out = resp.AppendCommand(out, []byte("SELECT"), strconv.AppendInt(nil, int64(h.DB), 10))
		r.db = h.DB
	}
	rd := resp.NewReader(bytes.NewReader(body))
	for rd.Fill() == nil {
		for {
			argv, err := rd.Next()
			if err != nil || argv == nil {
				break
			}
			name := string(bytes.ToLower(argv[0]))
			if limitdbOnly[name] {
				continue
			}
			if name == "select" && len(argv) == 2 {
				if db, err := strconv.Atoi(string(argv[1])); err == nil {
					r.db = db
				}
			}
			out = resp.AppendCommand(out, argv...)
		}
	}
	return out, true
}

// cmdSync: SYNC — the RDB payload as a bulk without its final CRLF, as
// Redis sends it, then the stream. The engine lock is held: the capture
// and the reader's registration see the same state, so the stream starts
// exactly after it. The snapshot is written by the reader's writer, off
// the lock (rdb-key-save-delay slows it as Redis's forked child, without
// stalling other clients); records queue meanwhile.
func cmdSync(s *Server, cl *client, argv [][]byte) {
	snap := s.eng.Capture()
	t, ok := s.door.Log().(*syncTee)
	if !ok {
		t = &syncTee{queued: &s.stats.replQueued, inner: s.door.Log(), readers: map[*syncReader]struct{}{}}
		s.door.SetLog(t)
	}
	r := &syncReader{ch: make(chan []byte, syncBacklog), db: -1}
	t.readers[r] = struct{}{}
	s.stats.syncFull.Add(1) // every SYNC is a full one (sync_full)
	go s.syncWriter(cl.nc, t, r, snap)
}

// syncWriter writes the snapshot, then a reader's queue, to its
// connection (off the engine lock) until the connection fails or the
// reader is dropped.
func (s *Server) syncWriter(nc net.Conn, t *syncTee, r *syncReader, snap *engine.Snapshot) {
	var rdb bytes.Buffer
	end := procs.Background()
	_, err := snap.WriteTo(&rdb)
	end()
	snap.Release()
	if err == nil {
		head := append([]byte{'$'}, strconv.Itoa(rdb.Len())...)
		var n int
		n, err = nc.Write(append(append(head, '\r', '\n'), rdb.Bytes()...))
		s.stats.replOutput.Add(int64(n))
	}
	if err == nil {
		for b := range r.ch {
			n, werr := nc.Write(b)
			s.stats.replOutput.Add(int64(n))
			s.stats.replQueued.Add(-int64(len(b)))
			if err = werr; err != nil {
				break
			}
		}
	}
	s.door.Lock()
	if _, ok := t.readers[r]; ok {
		delete(t.readers, r)
		close(r.ch)
	}
	// the last reader gone, the door gets its own log back: without a
	// log (appendonly no) it records nothing, and a SYNC once made every
	// later unit record its effects for nobody. Under the lock, between
	// units, so no hold has records for the tee to flush.
	if len(t.readers) == 0 && s.door.Log() == door.Log(t) {
		s.door.SetLog(t.inner)
	}
	s.door.Unlock()
	for b := range r.ch {
		s.stats.replQueued.Add(-int64(len(b)))
	}
	nc.Close()
}
