package server

import (
	"encoding/binary"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"limitdb/cluster"
	"limitdb/engine"
)

// CLUSTER MIGRATION IMPORT / STATUS / CANCEL (Redis 8.4's atomic slot
// migration surface) and the target's side of a handover: the leader of
// the group that imports drives every step (server/CLUSTER_MODE.md, "Slot
// handover"). A task is one IMPORT command; it moves its slots in
// batches of at most batchSlots slots, each batch one migration of the
// engine (LIMITDB.SLOTS IMPORT … OWN) whose id is the task's id and the
// batch's number. Every IMPORT of a task is logged when the command
// runs, so that a new leader resumes the task from its engine
// (resumeImports); the task's table (STATUS) is the leader's memory.

const (
	// batchSlots bounds a batch: the source's pause for a batch is its
	// copy, so it is bounded by the keys of 64 slots
	batchSlots = 64
	// hoRetryPause is the pause before a step is tried again
	hoRetryPause = 100 * time.Millisecond
	// handoverPeriod is how often a leader looks for imports to resume
	// and migrations out to settle
	handoverPeriod = 200 * time.Millisecond
	// tasksKept bounds the finished tasks STATUS still lists
	tasksKept = 32
)

// Redis 8.4's texts (cluster_asm.c) where it has the case, limitdb's own
// for the rest (commands.md lists them).
const (
	errMigUnknownArg   = "ERR unknown argument"
	errMigSelfOwner    = "ERR this node is already the owner of the slot range"
	errMigTwoSources   = "ERR slots belong to different source nodes"
	errMigInProgress   = "ERR another ASM task is already in progress"
	errMigNoCluster    = "ERR this group belongs to no cluster of groups (CLUSTER MEET first)"
	errMigInMulti      = "ERR CLUSTER MIGRATION cannot run inside MULTI (it waits for other groups)"
	errMigSourceAnswer = "malformed answer from the source"
)

func errMigNoOwner(slot int) string { return "ERR slot has no owner: " + strconv.Itoa(slot) }

// Task states as STATUS shows them.
const (
	taskNone      = "none"      // logged, not started
	taskFreezing  = "freezing"  // asking the source's leader to freeze the batch
	taskLoading   = "loading"   // copying the frozen slots
	taskTakeover  = "takeover"  // OWN committed: telling the source DONE
	taskCompleted = "completed" // every batch owned here
	taskCanceled  = "canceled"
	taskFailed    = "failed"
)

// migTask is one IMPORT as STATUS shows it (engine lock).
type migTask struct {
	id       string
	ranges   [][2]int
	source   int        // the source group's index
	batches  []string   // the engine migration ids, in order
	bRanges  [][][2]int // each batch's slots
	done     int        // batches owned here
	state    string
	lastErr  string
	retries  int64
	created  int64 // unix ms
	started  int64 // -1 until the first batch starts
	ended    int64 // -1 until completed, canceled or failed
	pauseMs  int64 // the longest pause of a batch: FREEZE asked to OWN committed
	sourceID string
	destID   string
	canceled bool
	// logged is closed once the task's IMPORTs are committed: its driver
	// asks the source nothing before (a leader change could lose them)
	logged chan struct{}
}

func (t *migTask) active() bool {
	return t.state != taskCompleted && t.state != taskCanceled && t.state != taskFailed
}

// cmdClusterMigration: CLUSTER MIGRATION IMPORT start end [start end …]
// | STATUS <ID id | ALL> | CANCEL <ID id | ALL>, run on the leader (a
// follower forwards it: clusterChangesSlots) and off the event loop.
func cmdClusterMigration(s *Server, cl *client, argv [][]byte) {
	if len(argv) < 4 {
		cl.w.Error(engine.ErrWrongArgs("cluster|migration"))
		return
	}
	switch strings.ToLower(string(argv[2])) {
	case "import":
		s.migrationImport(cl, argv)
	case "status":
		s.migrationStatus(cl, argv)
	case "cancel":
		s.migrationCancel(cl, argv)
	default:
		cl.w.Error(errMigUnknownArg)
	}
}

// migrationTarget reads STATUS's and CANCEL's <ID id | ALL>: the id ("":
// all), or false with the error written.
func migrationTarget(cl *client, argv [][]byte) (string, bool) {
	if len(argv) != 4 && len(argv) != 5 {
		cl.w.Error(engine.ErrWrongArgs("cluster|migration"))
		return "", false
	}
	switch strings.ToLower(string(argv[3])) {
	case "id":
		if len(argv) != 5 {
			cl.w.Error(engine.ErrWrongArgs("cluster|migration"))
			return "", false
		}
		return string(argv[4]), true
	case "all":
		if len(argv) != 4 {
			cl.w.Error(engine.ErrWrongArgs("cluster|migration"))
			return "", false
		}
		return "", true
	}
	cl.w.Error(errMigUnknownArg)
	return "", false
}

// parseMigrationRanges reads IMPORT's start end pairs with Redis's
// errors (parseSlotRangesOrReply).
func parseMigrationRanges(argv [][]byte) ([][2]int, string) {
	var ranges [][2]int
	for i := 0; i+1 < len(argv); i += 2 {
		lo, ok1 := engine.ParseSlot(argv[i])
		hi, ok2 := engine.ParseSlot(argv[i+1])
		if !ok1 || !ok2 {
			return nil, engine.ErrSlotInvalid
		}
		if lo > hi {
			return nil, engine.ErrSlotOrder(lo, hi)
		}
		ranges = append(ranges, [2]int{lo, hi})
	}
	return ranges, ""
}

// mapOwner is the index of the group the map says owns slot (-1: none;
// lock held).
func (s *Server) mapOwner(slot int) int {
	if s.cmap.owner == nil {
		return -1
	}
	if i := s.cmap.owner[slot]; i >= 0 {
		return s.cmap.groups[i].index
	}
	return -1
}

// migrationImport is IMPORT: the checks (Redis's: every slot owned by
// one other group; no other task in progress), then one IMPORT entry
// per batch, committed as one record before the id is answered; the
// driver then moves the batches one after the other.
func (s *Server) migrationImport(cl *client, argv [][]byte) {
	if (len(argv)-3)%2 != 0 {
		cl.w.Error(engine.ErrWrongArgs("cluster|migration"))
		return
	}
	ranges, msg := parseMigrationRanges(argv[3:])
	if msg != "" {
		cl.w.Error(msg)
		return
	}
	sh := s.eng.Shard()
	switch {
	case s.node == nil || sh.Index < 0:
		cl.w.Error(errMigNoCluster)
		return
	case cl.ctx.InMulti:
		cl.w.Error(errMigInMulti)
		return
	}
	source := -1
	var set slotSet
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			if s.eng.OwnsSlot(slot) {
				cl.w.Error(errMigSelfOwner)
				return
			}
			o := s.mapOwner(slot)
			switch {
			case o < 0:
				cl.w.Error(errMigNoOwner(slot))
				return
			case source >= 0 && o != source:
				cl.w.Error(errMigTwoSources)
				return
			}
			source = o
			set.addRange(slot, slot)
		}
	}
	for _, t := range s.hand.tasks {
		if t.active() {
			cl.w.Error(errMigInProgress)
			return
		}
	}
	for _, m := range s.eng.Migrations() {
		if m.Role == engine.MigrationIn {
			cl.w.Error(errMigInProgress)
			return
		}
	}
	t := &migTask{id: newRunID(), source: source, state: taskNone, created: time.Now().UnixMilli(),
		started: -1, ended: -1, sourceID: s.groupMaster(source), destID: s.myNodeID(), logged: make(chan struct{})}
	// the batches: the merged slots, batchSlots at a time
	var batches [][][2]int
	var cur [][2]int
	n := 0
	for slot := 0; slot < engine.NumSlots; slot++ {
		if set[slot>>6]&(1<<(slot&63)) == 0 {
			continue
		}
		t.ranges = addSlotRange(t.ranges, slot)
		cur = addSlotRange(cur, slot)
		if n++; n == batchSlots {
			batches, cur, n = append(batches, cur), nil, 0
		}
	}
	if n > 0 {
		batches = append(batches, cur)
	}
	var refused string
	s.door.Together(func() {
		for i, b := range batches {
			id := t.id + "-" + strconv.Itoa(i+1)
			if refused = replyError(s.execEffect(appendRangeArgs(effectArgv("LIMITDB.SLOTS", "IMPORT", id, strconv.Itoa(source)), b))); refused != "" {
				for _, done := range t.batches { // all or nothing
					s.execEffect(effectArgv("LIMITDB.SLOTS", "ABORT", done))
				}
				return
			}
			t.batches, t.bRanges = append(t.batches, id), append(t.bRanges, b)
		}
	})
	if refused != "" {
		cl.w.Error(refused)
		return
	}
	// in the table and driven before the lock is released: resumeImports
	// would otherwise take the imports for a former leader's task
	s.addTask(t)
	s.startTask(t)
	ticket := s.node.Ticket()
	s.door.Unlock()
	err := s.node.Wait(ticket)
	s.door.Lock()
	cl.ctx.Now, _ = s.door.Now()
	if err != nil {
		// the driver stops: this node leads no more (a new leader
		// resumes the imports if they were committed)
		cl.w.Error(errText(err))
		return
	}
	close(t.logged)
	cl.w.BulkString(t.id)
}

// addTask enters t in the table, dropping the oldest finished tasks
// beyond tasksKept (lock held).
func (s *Server) addTask(t *migTask) {
	s.hand.tasks = append(s.hand.tasks, t)
	for finished := 0; ; {
		finished = 0
		for _, x := range s.hand.tasks {
			if !x.active() {
				finished++
			}
		}
		if finished <= tasksKept {
			return
		}
		for i, x := range s.hand.tasks {
			if !x.active() {
				s.hand.tasks = append(s.hand.tasks[:i], s.hand.tasks[i+1:]...)
				break
			}
		}
	}
}

// startTask starts t's driver unless one runs (lock held).
func (s *Server) startTask(t *migTask) {
	if s.hand.driving == nil {
		s.hand.driving = map[string]bool{}
	}
	if s.hand.driving[t.id] {
		return
	}
	s.hand.driving[t.id] = true
	s.wg.Add(1)
	go s.driveTask(t)
}

// migrationStatus is STATUS: the tasks of this leader (imports) and the
// migrations out of this group (the source's side, from its engine), as
// Redis's 12-field maps.
func (s *Server) migrationStatus(cl *client, argv [][]byte) {
	id, ok := migrationTarget(cl, argv)
	if !ok {
		return
	}
	type row struct {
		t  *migTask
		op string
	}
	var rows []row
	for _, t := range s.hand.tasks {
		if id == "" || t.id == id {
			rows = append(rows, row{t, "import"})
		}
	}
	// the source's side: one per task id of its migrations out
	out := map[string]*migTask{}
	var outIDs []string
	for _, t := range s.hand.outDone {
		if id == "" || t.id == id {
			c := *t
			c.ranges = append([][2]int(nil), t.ranges...)
			out[t.id] = &c
			outIDs = append(outIDs, t.id)
		}
	}
	for _, m := range s.eng.Migrations() {
		if m.Role != engine.MigrationOut {
			continue
		}
		tid := taskOf(m.ID)
		if id != "" && tid != id {
			continue
		}
		t := out[tid]
		if t == nil {
			t = &migTask{id: tid, state: m.State.String(), created: -1, started: -1, ended: -1,
				sourceID: s.myNodeID(), destID: s.groupMaster(m.Peer)}
			out[tid] = t
			outIDs = append(outIDs, tid)
		}
		for _, r := range m.Ranges {
			for slot := r[0]; slot <= r[1]; slot++ {
				t.ranges = addSlotRange(t.ranges, slot)
			}
		}
		if m.State == engine.SlotFrozen || t.state == taskCompleted {
			t.state, t.ended = m.State.String(), -1 // a batch in progress
		}
	}
	for _, tid := range outIDs {
		rows = append(rows, row{out[tid], "migrate"})
	}
	cl.w.Array(len(rows))
	for _, r := range rows {
		writeTask(cl, r.t, r.op)
	}
}

// taskOf is the task id of a batch's migration id.
func taskOf(id string) string {
	if i := strings.LastIndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	return id
}

// writeTask is one task as Redis's replyTaskStatus writes it: 12
// fields, the first 7 strings, the rest integers.
func writeTask(cl *client, t *migTask, op string) {
	strs := [...][2]string{{"id", t.id}, {"slots", rangesString(t.ranges)}, {"source", t.sourceID},
		{"dest", t.destID}, {"operation", op}, {"state", t.state}, {"last_error", t.lastErr}}
	ints := [...]struct {
		k string
		v int64
	}{{"retries", t.retries}, {"create_time", t.created}, {"start_time", t.started}, {"end_time", t.ended}, {"write_pause_ms", t.pauseMs}}
	cl.w.Map(len(strs) + len(ints))
	for _, f := range strs {
		cl.w.BulkString(f[0])
		cl.w.BulkString(f[1])
	}
	for _, f := range ints {
		cl.w.BulkString(f.k)
		cl.w.Int(f.v)
	}
}

// rangesString is Redis's slotRangeArrayToString: "start-end" separated
// by spaces.
func rangesString(ranges [][2]int) string {
	var b strings.Builder
	for i, r := range ranges {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(r[0]))
		b.WriteByte('-')
		b.WriteString(strconv.Itoa(r[1]))
	}
	return b.String()
}

// migrationCancel is CANCEL: every batch of the task(s) not owned yet is
// aborted here (ABORT, committed), then the source is told to take its
// slots back (CANCEL at the source: never before the ABORT commits, or
// both groups could own them). A batch owned already stays moved. The
// reply counts the tasks cancelled.
func (s *Server) migrationCancel(cl *client, argv [][]byte) {
	id, ok := migrationTarget(cl, argv)
	if !ok {
		return
	}
	if s.node == nil {
		cl.w.Int(0)
		return
	}
	type undo struct {
		id     string
		source int
	}
	var undos []undo
	n := 0
	s.door.Together(func() {
		for _, t := range s.hand.tasks {
			if !t.active() || (id != "" && t.id != id) {
				continue
			}
			n++
			t.canceled = true
			t.state, t.lastErr, t.ended = taskCanceled, "Cancelled due to user request", time.Now().UnixMilli()
			for _, b := range t.batches {
				if m, ok := s.migrationByID(b); ok && m.Role == engine.MigrationIn {
					s.execEffect(effectArgv("LIMITDB.SLOTS", "ABORT", b))
					undos = append(undos, undo{b, m.Peer})
				}
			}
		}
	})
	if len(undos) > 0 {
		ticket := s.node.Ticket()
		s.door.Unlock()
		err := s.node.Wait(ticket)
		if err == nil {
			for _, u := range undos {
				s.door.Lock()
				addrs := s.groupAddrs(u.source)
				s.door.Unlock()
				// unanswered, the source cancels by itself: it asks
				// this group (settleOutgoing)
				s.askLeader(addrs, appendQueryString([]byte{queryHandover, hoCancel}, u.id), hoAskWait, dirTryWait)
			}
		}
		s.door.Lock()
		cl.ctx.Now, _ = s.door.Now()
		if err != nil {
			cl.w.Error(errText(err))
			return
		}
	}
	cl.w.Int(int64(n))
}

var errTaskStopped = errors.New("stopped")

// driveTask moves t's batches, one after the other, while this node
// leads (the lock not held). A new leader resumes from its engine.
func (s *Server) driveTask(t *migTask) {
	defer s.wg.Done()
	defer func() {
		s.door.Lock()
		delete(s.hand.driving, t.id)
		s.door.Unlock()
	}()
	if t.logged != nil {
		select {
		case <-t.logged:
		case <-s.stop:
			return
		case <-time.After(hoAskWait):
			return // not committed: a new leader resumes it if it was
		}
	}
	for {
		s.door.Lock()
		if !t.active() || t.canceled {
			s.door.Unlock()
			return
		}
		if t.started < 0 {
			t.started = time.Now().UnixMilli()
		}
		if t.done >= len(t.batches) {
			t.state, t.ended = taskCompleted, time.Now().UnixMilli()
			s.door.Unlock()
			return
		}
		id := t.batches[t.done]
		s.door.Unlock()
		err := s.importBatch(t, id)
		s.door.Lock()
		switch {
		case err == nil:
			t.done++
		case err == errTaskStopped:
			s.door.Unlock()
			return
		default:
			if t.active() {
				t.state, t.lastErr, t.ended = taskFailed, err.Error(), time.Now().UnixMilli()
			}
			s.door.Unlock()
			return
		}
		s.door.Unlock()
	}
}

// stopped reports whether the driver must stop (lock held): the node
// stops leading or serving, or the task was cancelled.
func (s *Server) stopped(t *migTask) bool {
	select {
	case <-s.stop:
		return true
	default:
	}
	return t.canceled || !s.node.Serving()
}

// importBatch moves one batch: FREEZE at the source, the capture LOADed
// here, OWN (the commit point), DONE at the source, the directory's move.
// Every step before OWN is retried until it succeeds, the task is
// cancelled or this node stops leading; a refusal (the source does not
// own the slots, the digests differ) fails the task: the batch is
// aborted here and then cancelled at the source.
func (s *Server) importBatch(t *migTask, id string) error {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			time.Sleep(hoRetryPause)
		}
		s.door.Lock()
		if s.stopped(t) {
			s.door.Unlock()
			return errTaskStopped
		}
		if attempt > 0 {
			t.retries++
		}
		m, ok := s.migrationByID(id)
		if !ok {
			// owned already (a former leader's OWN committed), or aborted
			done := !t.canceled && s.ownsAllOf(t.bRanges[t.done])
			s.door.Unlock()
			if done {
				return nil
			}
			return errors.New("the import was aborted")
		}
		if m.Loaded > 0 {
			// a former attempt's partial copy: started again from
			// nothing, ABORT and IMPORT in one record (the source's
			// probe never sees the import missing)
			s.door.Together(func() {
				s.execEffect(effectArgv("LIMITDB.SLOTS", "ABORT", id))
				s.execEffect(appendRangeArgs(effectArgv("LIMITDB.SLOTS", "IMPORT", id, strconv.Itoa(m.Peer)), m.Ranges))
			})
		}
		sh := s.eng.Shard()
		addrs := s.groupAddrs(m.Peer)
		t.state = taskFreezing
		s.door.Unlock()

		t0 := time.Now()
		req := appendQueryString([]byte{queryHandover, hoFreeze}, id)
		req = binary.AppendUvarint(req, uint64(sh.Index))
		req = appendQueryRanges(req, m.Ranges)
		st, body := s.askLeader(addrs, req, hoAskWait, dirTryWait)
		if st == queryRefused {
			return s.failBatch(t, id, m.Peer, string(body))
		}
		if st != cluster.QueryOK {
			s.noteRetry(t, "the source's leader did not answer the freeze")
			continue
		}
		s.log.Info("handover: the source froze a batch", "migration", id, "slots", rangesString(m.Ranges))
		r := queryReader{b: body, ok: true}
		floor := r.varint()
		digest, _, okD := readQueryBytes(r.b)
		if !r.ok || !okD {
			s.noteRetry(t, errMigSourceAnswer)
			continue
		}
		s.door.Lock()
		t.state = taskLoading
		s.door.Unlock()
		s.debugPause(&s.hand.pause)
		if err := s.loadCapture(t, id, addrs); err != nil {
			if err == errTaskStopped {
				return err
			}
			s.noteRetry(t, err.Error())
			s.log.Warn("handover: copying a batch failed, trying again", "migration", id, "err", err)
			continue
		}
		// OWN: the commit point
		s.door.Lock()
		if s.stopped(t) {
			s.door.Unlock()
			return errTaskStopped
		}
		msg := replyError(s.execEffect(effectArgv("LIMITDB.SLOTS", "OWN", id, strconv.FormatInt(floor, 10), digestHex(digest))))
		if msg != "" {
			s.door.Unlock()
			return s.failBatch(t, id, m.Peer, msg)
		}
		s.updateClusterState()
		ticket := s.node.Ticket()
		s.door.Unlock()
		if err := s.node.Wait(ticket); err != nil {
			return errTaskStopped // a new leader finds it owned or importing
		}
		s.door.RaiseReadTime(floor)
		pause := time.Since(t0).Milliseconds()
		s.log.Info("handover: this group owns a batch", "migration", id, "slots", rangesString(m.Ranges), "pause_ms", pause)
		s.door.Lock()
		t.pauseMs = max(t.pauseMs, pause)
		t.state = taskTakeover
		addr := s.myClientAddr()
		s.door.Unlock()
		s.refreshMap()
		s.debugPause(&s.hand.pauseOwn)
		s.finishAtSource(t, id, addrs, addr, sh, m.Peer, m.Ranges)
		return nil
	}
}

func (s *Server) ownsAllOf(ranges [][2]int) bool {
	if len(ranges) == 0 {
		return false
	}
	for _, r := range ranges {
		for slot := r[0]; slot <= r[1]; slot++ {
			if !s.eng.OwnsSlot(slot) {
				return false
			}
		}
	}
	return true
}

// noteRetry records why a step is tried again.
func (s *Server) noteRetry(t *migTask, why string) {
	s.log.Info("handover: a step failed, trying again", "task", t.id, "why", why)
	s.door.Lock()
	t.lastErr = why
	s.door.Unlock()
}

// loadCapture fetches the frozen slots' capture from the source's leader
// and LOADs it here, chunk by chunk (each LOAD an entry; OWN after them
// commits them all).
func (s *Server) loadCapture(t *migTask, id string, addrs []string) error {
	for first := 0; ; {
		req := appendQueryString([]byte{queryHandover, hoCapture}, id)
		req = binary.AppendUvarint(req, uint64(first))
		st, body := s.askLeader(addrs, req, hoAskWait, dirTryWait)
		if st != cluster.QueryOK {
			return errors.New(refusal(st, body, "the source's leader did not answer the capture"))
		}
		r := queryReader{b: body, ok: true}
		total := int(r.uvarint())
		n := r.count(1)
		var chunks [][]byte
		for range n {
			c, rest, ok := readQueryBytes(r.b)
			if !ok {
				r.ok = false
				break
			}
			chunks, r.b = append(chunks, c), rest
		}
		if !r.ok || first+n > total || (n == 0 && first < total) {
			return errors.New(errMigSourceAnswer)
		}
		s.door.Lock()
		if s.stopped(t) {
			s.door.Unlock()
			return errTaskStopped
		}
		for _, c := range chunks {
			argv := [][]byte{[]byte("LIMITDB.SLOTS"), []byte("LOAD"), []byte(id), c}
			if msg := replyError(s.execEffect(argv)); msg != "" {
				s.door.Unlock()
				return errors.New(msg)
			}
		}
		s.door.Unlock()
		first += n
		if first >= total {
			return nil
		}
	}
}

// finishAtSource tells the source DONE and moves the slots in the
// directory, each retried a while (the source's leader also finishes by
// itself: it asks this group whether it owns the slots).
func (s *Server) finishAtSource(t *migTask, id string, addrs []string, addr string, sh engine.ShardRecord, source int, ranges [][2]int) {
	req := appendQueryString([]byte{queryHandover, hoDone}, id)
	req = appendQueryString(req, addr)
	for i := 0; i < 10; i++ {
		if st, _ := s.askLeader(addrs, req, hoAskWait, dirTryWait); st == cluster.QueryOK {
			break
		}
		s.door.Lock()
		addrs = s.groupAddrs(source)
		s.door.Unlock()
	}
	for i := 0; i < 10; i++ {
		if s.moveInDirectory(sh, source, sh.Index, ranges) == "" {
			return
		}
		time.Sleep(hoRetryPause)
	}
	s.noteRetry(t, "the directory did not record the move yet")
}

// failBatch ends a task on a refusal: the batch is aborted here
// (committed), then cancelled at the source.
func (s *Server) failBatch(t *migTask, id string, source int, why string) error {
	s.door.Lock()
	if _, ok := s.migrationByID(id); ok {
		s.execEffect(effectArgv("LIMITDB.SLOTS", "ABORT", id))
	}
	ticket := s.node.Ticket()
	s.door.Unlock()
	if err := s.node.Wait(ticket); err != nil {
		return errTaskStopped
	}
	s.door.Lock()
	addrs := s.groupAddrs(source)
	s.door.Unlock()
	s.askLeader(addrs, appendQueryString([]byte{queryHandover, hoCancel}, id), hoAskWait, dirTryWait)
	return errors.New(strings.TrimPrefix(why, "ERR "))
}

// myClientAddr is this node's client address as the map shows it.
func (s *Server) myClientAddr() string {
	for _, n := range s.shardView() {
		if n.myself {
			return n.host + ":" + strconv.Itoa(n.port)
		}
	}
	return ""
}

// startHandover starts the leader's handover loop (Serve: cluster mode
// with a Raft node).
func (s *Server) startHandover() {
	if !s.clusterMode || s.node == nil {
		return
	}
	s.wg.Add(1)
	go s.handoverLoop()
}

// handoverLoop: on the leader, resume every import its engine holds and
// no driver runs (a former leader's), and settle the migrations out.
func (s *Server) handoverLoop() {
	defer s.wg.Done()
	tk := time.NewTicker(handoverPeriod)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
		}
		if !s.node.Serving() {
			continue
		}
		s.door.Lock()
		s.resumeImports()
		s.door.Unlock()
		s.settleOutgoing()
	}
}

// resumeImports starts a driver for each task of the imports the engine
// holds that none drives (lock held, on the leader).
func (s *Server) resumeImports() {
	byTask := map[string][]engine.Migration{}
	for _, m := range s.eng.Migrations() {
		if m.Role == engine.MigrationIn {
			byTask[taskOf(m.ID)] = append(byTask[taskOf(m.ID)], m)
		}
	}
	for tid, ms := range byTask {
		if s.hand.driving[tid] {
			continue
		}
		var t *migTask
		for _, x := range s.hand.tasks {
			if x.id == tid {
				t = x
			}
		}
		if t == nil || !t.active() {
			// a former leader's task: its batches still importing
			sort.Slice(ms, func(i, j int) bool { return batchNo(ms[i].ID) < batchNo(ms[j].ID) })
			t = &migTask{id: tid, source: ms[0].Peer, state: taskNone, created: time.Now().UnixMilli(),
				started: -1, ended: -1, sourceID: s.groupMaster(ms[0].Peer), destID: s.myNodeID()}
			for _, m := range ms {
				t.batches, t.bRanges = append(t.batches, m.ID), append(t.bRanges, m.Ranges)
				for _, r := range m.Ranges {
					for slot := r[0]; slot <= r[1]; slot++ {
						t.ranges = addSlotRange(t.ranges, slot)
					}
				}
			}
			s.addTask(t)
		}
		s.log.Info("handover: resuming an import", "task", tid)
		t.logged = nil // (its IMPORTs are this leader's state)
		s.startTask(t)
	}
	// a task this node drove while it led before, which another leader
	// finished meanwhile: its driver stopped when this node stopped
	// leading, with the task still active, and the engine holds none of
	// its imports any more. Settled here: completed when the slots are
	// this group's, else failed (without this it stayed "loading" in
	// STATUS and refused every later IMPORT as in progress once this
	// node led again: TestFaultsMigrationSmoke, the target's leader
	// stopped at loading)
	for _, t := range s.hand.tasks {
		if !t.active() || s.hand.driving[t.id] || byTask[t.id] != nil {
			continue
		}
		if s.ownsAllOf(t.ranges) {
			t.state = taskCompleted
		} else {
			t.state, t.lastErr = taskFailed, "the import was aborted"
		}
		t.ended = time.Now().UnixMilli()
		s.log.Info("handover: settled a former leadership's task", "task", t.id, "state", t.state)
	}
}

func batchNo(id string) int {
	n, _ := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:])
	return n
}

// debugHandoverPause is DEBUG HANDOVER-PAUSE ms (own: -PAUSE-OWN).
func (s *Server) debugHandoverPause(cl *client, own bool, arg []byte) {
	ms, ok := engine.ParseIntB(arg)
	if !ok || ms < 0 {
		cl.w.Error(engine.ErrNotInt)
		return
	}
	if own {
		s.hand.pauseOwn.Store(ms)
	} else {
		s.hand.pause.Store(ms)
	}
	cl.w.OK()
}

// debugPause waits the ms of p (the tests' kills and cancels).
func (s *Server) debugPause(p *atomic.Int64) {
	if ms := p.Load(); ms > 0 {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-s.stop:
		}
	}
}
