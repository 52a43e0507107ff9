package tests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The fault suite's nemeses. A schedule runs them one at a time, each on
// a target (the leader, a follower or any node, resolved when the step
// starts) for a duration, after which the nemesis undoes its fault; the
// end of the schedule heals whatever is left (healAll).

type nemesis struct {
	name string
	// run injects the fault on node i, holds it for d and undoes it;
	// false: it could not (nothing was injected)
	run func(r *faultRun, i int, d time.Duration) bool
}

var faultNemesisNames = []string{"kill", "pause", "wipe", "clock", "partition", "delay", "delay-oneway", "reset", "snapshot-kill", "snapshot-pause", "disk-full"}

var faultNemeses = map[string]nemesis{
	"kill":           {"kill", nemKill},
	"pause":          {"pause", nemPause},
	"wipe":           {"wipe", nemWipe},
	"clock":          {"clock", nemClock},
	"partition":      {"partition", nemPartition},
	"delay":          {"delay", nemDelay},
	"delay-oneway":   {"delay-oneway", nemDelayOneWay},
	"reset":          {"reset", nemReset},
	"snapshot-kill":  {"snapshot-kill", nemSnapshotKill},
	"snapshot-pause": {"snapshot-pause", nemSnapshotPause},
	"disk-full":      {"disk-full", nemDiskFull},
}

// SIGKILL, then a restart on the same dir.
func nemKill(r *faultRun, i int, d time.Duration) bool {
	r.c.kill(i)
	time.Sleep(d)
	r.c.start(i)
	return true
}

// SIGSTOP, then SIGCONT: the process keeps its connections and its
// state, and wakes up believing what it believed (a GC or VM pause).
func nemPause(r *faultRun, i int, d time.Duration) bool {
	nd := r.c.nodes[i]
	if nd.cmd == nil {
		return false
	}
	pid := nd.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		r.note("pause: SIGSTOP %d: %v", pid, err)
		return false
	}
	r.paused[i] = pid
	time.Sleep(d)
	syscall.Kill(pid, syscall.SIGCONT)
	delete(r.paused, i)
	return true
}

// A wiped dir, replaced as README.md says: the node is killed and comes
// back with an empty dir under the same --node-id and address, with
// --join naming a live member. The old entry stays a member that is
// down until the leader replaces it with the new incarnation (as a
// non-voter, promoted once caught up): a node with an empty log must
// never vote under the identity that once voted.
//
// The new process answers at once (PING, RAFT INFO raft_joining:1)
// while its join is retried until the leader has added it. A wipe waits
// (up to 10 s) for every node to be added and a voter first, and is not
// injected when one is not: the replacement of an earlier wiped node
// that has not joined yet leaves its old incarnation in the
// configuration, one that has not caught up yet is a non-voter, the voters are its
// two peers, and wiping one of them too loses two of three disks before
// the data is on a third: no quorum is left, ever (seed 18 with
// LIMITDB_FAULTS_NEMESES=wipe,pause,partition,snapshot-kill,kill, s005:
// n3 wiped, then n1 while n3's replacement installed the snapshot; the
// voters were n1's old incarnation and n2, and n1's replacement waited
// for a leader that could not be elected).
func nemWipe(r *faultRun, i int, d time.Duration) bool {
	nd := r.c.nodes[i]
	if !r.allVoters(10 * time.Second) {
		r.note("wipe: not injected on %s: not every node is a voter yet (an earlier replacement is joining or catching up)", nd.id)
		return false
	}
	r.c.kill(i)
	time.Sleep(d)
	r.wipes++
	if i == r.diskNode {
		r.clearDiskDir()
	} else {
		nd.dir = r.t.TempDir()
	}
	for j := range r.c.nodes {
		if j != i && r.c.nodes[j].cmd != nil {
			nd.join = r.c.addr(j)
			break
		}
	}
	r.note("wipe: %s restarts with an empty dir, joining through %s", nd.id, nd.join)
	r.c.start(i)
	return true
}

// allVoters waits up to d for a leader whose configuration holds every
// node of the cluster as a voter, and no other member, while no node is
// still joining.
func (r *faultRun) allVoters(d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		l := r.c.leader()
		if l < 0 {
			continue
		}
		m := r.c.info(l)
		voters := 0
		for k, v := range m {
			if strings.HasPrefix(k, "raft_member") && strings.Contains(v, "voter=1") {
				voters++
			}
		}
		if voters != len(r.c.nodes) || m["raft_members"] != strconv.Itoa(len(r.c.nodes)) {
			continue
		}
		// a replacement that has not been added yet answers while it
		// joins, and the configuration still holds the voter it replaces
		joined := true
		for i := range r.c.nodes {
			if mi := r.c.info(i); mi == nil || mi["raft_joining"] != "0" {
				joined = false
			}
		}
		if joined {
			return true
		}
	}
	return false
}

// clockRuntimeOff is set once CONFIG SET debug-clock-offset-ms answers an
// error (a build where the offset is fixed at start): the clock nemesis
// then only sets offsets at start.
var clockRuntimeOff atomic.Bool

// A clock step on node i: its offset moves to a new value within
// ±0.4·max-clock-skew-ms of true time (clockDraw). The offset stays (clocks that jumped
// do not jump back by themselves).
func nemClock(r *faultRun, i int, d time.Duration) bool {
	if clockRuntimeOff.Load() {
		return false
	}
	off := r.clockDraw()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	t0 := r.now()
	err := r.c.cli(i).Do(ctx, "CONFIG", "SET", "debug-clock-offset-ms", strconv.FormatInt(off, 10)).Err()
	cancel()
	var rerr redis.Error
	if errors.As(err, &rerr) {
		clockRuntimeOff.Store(true)
		r.note("clock: CONFIG SET debug-clock-offset-ms answers %q: the clock nemesis changes offsets only at start from now on", err)
		r.t.Logf("faults: CONFIG SET debug-clock-offset-ms answers %q: runtime clock changes are off", err)
		return false
	}
	// an error of another kind (a timeout) may still have applied it:
	// count the change either way, which only widens the rate bound
	delta := off - r.clockOff[i]
	if delta < 0 {
		delta = -delta
	}
	r.mu.Lock()
	r.clockEvents = append(r.clockEvents, clockEvent{t0, time.Duration(delta) * time.Millisecond})
	r.mu.Unlock()
	r.note("clock: %s offset %d -> %d ms (%v)", r.c.nodes[i].id, r.clockOff[i], off, err)
	r.clockOff[i] = off
	time.Sleep(d)
	return true
}

// Both directions between node i and every other node cut.
func nemPartition(r *faultRun, i int, d time.Duration) bool {
	r.c.partition(i)
	time.Sleep(d)
	r.c.heal()
	return true
}

// Every link of node i slowed both ways.
func nemDelay(r *faultRun, i int, d time.Duration) bool {
	lat := time.Duration(50+r.rng.Intn(450)) * time.Millisecond
	for j := range r.c.nodes {
		if j != i {
			r.shaper.setDelay(i, j, lat)
			r.shaper.setDelay(j, i, lat)
		}
	}
	r.note("delay: %s's links +%v both ways", r.c.nodes[i].id, lat)
	time.Sleep(d)
	r.shaper.clear()
	return true
}

// Node i's links slowed in one direction only: what it sends, or what it
// receives.
func nemDelayOneWay(r *faultRun, i int, d time.Duration) bool {
	lat := time.Duration(100+r.rng.Intn(700)) * time.Millisecond
	out := r.rng.Intn(2) == 0
	for j := range r.c.nodes {
		if j != i {
			if out {
				r.shaper.setDelay(i, j, lat)
			} else {
				r.shaper.setDelay(j, i, lat)
			}
		}
	}
	dir := "from"
	if !out {
		dir = "to"
	}
	r.note("delay-oneway: +%v on what goes %s %s", lat, dir, r.c.nodes[i].id)
	time.Sleep(d)
	r.shaper.clear()
	return true
}

// Node i's links reset again and again (every 100-250 ms): connections
// close in mid-stream and are made again.
func nemReset(r *faultRun, i int, d time.Duration) bool {
	end := time.Now().Add(d)
	n := 0
	for time.Now().Before(end) {
		n += resetProxyConns(r.c.nodes[i].proxy)
		ip := r.c.nodes[i].ip
		for j, nd := range r.c.nodes {
			if j != i {
				n += resetConnsFrom(nd.proxy, ip)
			}
		}
		time.Sleep(time.Duration(100+r.rng.Intn(150)) * time.Millisecond)
	}
	r.note("reset: %d connections of %s reset", n, r.c.nodes[i].id)
	return true
}

func resetConnsFrom(p *tcpProxy, ip string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c, src := range p.conns {
		if src == ip {
			c.Close()
			n++
		}
	}
	return n / 2
}

// A kill in a snapshot: SAVE on node i takes a Raft snapshot (it returns
// once the state is captured; Raft then writes the snapshot and truncates
// the log in the background), and SIGKILL lands either 0-40 ms after SAVE
// was sent (during the capture) or 0-20 ms after its reply (during the
// write or the truncation); restart after d. The schedules' low
// raft-snapshot-threshold also snapshots and truncates every few seconds,
// so any kill may land in one.
func nemSnapshotKill(r *faultRun, i int, d time.Duration) bool {
	cli := redis.NewClient(&redis.Options{Addr: r.c.addr(i), MaxRetries: -1, ReadTimeout: 5 * time.Second})
	done := make(chan error, 1)
	go func() { done <- cli.Do(context.Background(), "SAVE").Err() }()
	afterReply := r.rng.Intn(2) == 0
	wait := time.Duration(r.rng.Intn(40)) * time.Millisecond
	var err error
	replied := false
	if afterReply {
		select {
		case err = <-done:
			replied = true
			wait = time.Duration(r.rng.Intn(20)) * time.Millisecond
		case <-time.After(3 * time.Second):
		}
	}
	time.Sleep(wait)
	r.c.kill(i)
	if !replied {
		select {
		case err = <-done:
		case <-time.After(2 * time.Second):
		}
	}
	r.note("snapshot-kill: SIGKILL %v after SAVE's %s on %s (SAVE: %v)", wait, map[bool]string{true: "reply", false: "sending"}[replied], r.c.nodes[i].id, err)
	cli.Close()
	time.Sleep(d)
	r.c.start(i)
	return true
}

// Leadership lost in a snapshot: SAVE in a loop on node i (each one a
// Raft snapshot, of 20,000 keys from the first such step on) while both
// other nodes are stopped for d, so that node i,
// if it leads, steps down (no quorum) while a snapshot is being taken;
// then SIGCONT, and the SAVEs stop. Issue 18's lock-order deadlock
// between a snapshot and a leadership loss hung the leader so.
func nemSnapshotPause(r *faultRun, i int, d time.Duration) bool {
	cli := redis.NewClient(&redis.Options{Addr: r.c.addr(i), MaxRetries: -1, ReadTimeout: 3 * time.Second})
	defer cli.Close()
	if !r.bigFill {
		// the 20,000 keys, so that a snapshot takes a while
		// (the schedule wrote 3,000)
		r.bigFill = true
		l := r.c.leader()
		if l < 0 {
			l = i
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		pipe := r.c.cli(l).Pipeline()
		for k := 3000; k < 20000; k++ {
			pipe.Set(ctx, "f:fill:"+strconv.Itoa(k), strings.Repeat("x", 200), 0)
		}
		_, err := pipe.Exec(ctx)
		cancel()
		r.note("snapshot-pause: 17,000 more keys through %s (%v)", r.c.nodes[l].id, err)
	}
	stop := make(chan struct{})
	saves := make(chan int, 1)
	go func() {
		n := 0
		for !stopped(stop) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if cli.Do(ctx, "SAVE").Err() == nil {
				n++
			}
			cancel()
		}
		saves <- n
	}()
	time.Sleep(100 * time.Millisecond)
	var pids []int
	for j, nd := range r.c.nodes {
		if j != i && nd.cmd != nil && syscall.Kill(nd.cmd.Process.Pid, syscall.SIGSTOP) == nil {
			r.paused[j] = nd.cmd.Process.Pid
			pids = append(pids, j)
		}
	}
	time.Sleep(d)
	for _, j := range pids {
		syscall.Kill(r.paused[j], syscall.SIGCONT)
		delete(r.paused, j)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	r.note("snapshot-pause: %d SAVEs on %s while the others were stopped", <-saves, r.c.nodes[i].id)
	return true
}

// A full disk on the node whose dir is on the schedule's small tmpfs:
// a junk file takes every free byte for d, then is removed. A node that
// exited meanwhile is restarted.
func nemDiskFull(r *faultRun, _ int, d time.Duration) bool {
	if r.diskDir == "" {
		return false
	}
	junk := filepath.Join(r.diskMount, "junk")
	f, err := os.Create(junk)
	if err == nil {
		b := make([]byte, 1<<20)
		for err == nil {
			_, err = f.Write(b)
		}
		f.Close()
	}
	r.note("disk-full: %s's disk filled (%v)", r.c.nodes[r.diskNode].id, err)
	// raft-wal's segments are preallocated (16 MB), so appends go on
	// into the current one; a snapshot needs new space: ask for one
	cli := redis.NewClient(&redis.Options{Addr: r.c.addr(r.diskNode), MaxRetries: -1, ReadTimeout: 3 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	serr := cli.Do(ctx, "SAVE").Err()
	cancel()
	cli.Close()
	r.note("disk-full: SAVE on %s: %v", r.c.nodes[r.diskNode].id, serr)
	time.Sleep(d)
	os.Remove(junk)
	r.restartIfDead(r.diskNode)
	return true
}

// mountDisk mounts a small tmpfs for one node's dir; it returns false
// (and says why) where mounting is not possible. The unmount is
// registered first, so it runs after the cluster's processes are gone.
func (r *faultRun) mountDisk(t *testing.T, node int) bool {
	dir, err := os.MkdirTemp("", "limitdb-faults-disk-")
	if err != nil {
		t.Logf("faults: disk-full off: %v", err)
		return false
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", dir).CombinedOutput(); err != nil {
		os.Remove(dir)
		t.Logf("faults: disk-full off: cannot mount a tmpfs (%v: %s)", err, strings.TrimSpace(string(out)))
		return false
	}
	t.Cleanup(func() {
		for k := 0; k < 20; k++ {
			if exec.Command("umount", dir).Run() == nil {
				os.Remove(dir)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		exec.Command("umount", "-l", dir).Run()
		os.Remove(dir)
	})
	r.diskMount, r.diskNode = dir, node
	r.diskDir = filepath.Join(dir, "node")
	return os.Mkdir(r.diskDir, 0o755) == nil
}

func (r *faultRun) clearDiskDir() {
	ents, _ := os.ReadDir(r.diskDir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(r.diskDir, e.Name()))
	}
}

// alive reports whether node i's process is still there (signal 0).
func (r *faultRun) alive(i int) bool {
	nd := r.c.nodes[i]
	if nd.cmd == nil || nd.cmd.Process == nil {
		return false
	}
	err := nd.cmd.Process.Signal(syscall.Signal(0))
	return err == nil || !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH)
}

// restartIfDead restarts node i if its process exited (or was killed).
// A process that is there but answers no PING for 10 s is hung: that is a
// finding, not a fault to heal in silence, so it gets SIGQUIT first (Go
// writes every goroutine's stack to the node's log) and is recorded in
// r.hung, which fails the schedule; then it is restarted so that the
// checks can run.
func (r *faultRun) restartIfDead(i int) {
	nd := r.c.nodes[i]
	if nd.cmd != nil && r.alive(i) {
		if waitPingFor(r.c.addr(i), 10*time.Second) {
			return
		}
		if r.alive(i) {
			nd.cmd.Process.Signal(syscall.SIGQUIT)
			time.Sleep(time.Second)
			r.note("node %s is hung: alive, no PING answered for 10 s; SIGQUIT wrote its goroutines to its log", nd.id)
			r.hung = append(r.hung, nd.id)
			r.c.kill(i)
			r.c.start(i)
			return
		}
	}
	if nd.cmd != nil {
		r.note("node %s is gone; restarting it", nd.id)
		r.exited = append(r.exited, nd.id)
	}
	r.c.kill(i)
	r.c.start(i)
}

func waitPingFor(addr string, d time.Duration) bool {
	cli := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer cli.Close()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cli.Ping(context.Background()).Err() == nil {
			return true
		}
	}
	return false
}

// healAll undoes every fault: SIGCONT to paused processes, every link
// open and undelayed, the disk emptied of junk, every node running.
func (r *faultRun) healAll() {
	for i, pid := range r.paused {
		syscall.Kill(pid, syscall.SIGCONT)
		delete(r.paused, i)
	}
	r.c.heal()
	r.shaper.clear()
	if r.diskMount != "" {
		os.Remove(filepath.Join(r.diskMount, "junk"))
	}
	for i := range r.c.nodes {
		r.restartIfDead(i)
	}
}
