package cluster

import (
	"encoding/binary"
	"errors"
	"time"
)

// Blocking commands in a cluster (server/blocked.go has the commands'
// side). Clients block on the leader, so first come, first served holds
// across every node's clients: a follower forwards a blocking command
// like any write, and its forwarded unit may wait as long as the
// command's timeout says (no forwarding timeout applies to it).
//
//   - The leader runs the unit; when the command blocks it answers an
//     interim 'b' frame (the unit blocked: nothing was popped), then the
//     final answer once the client is served, times out or is unblocked,
//     after the served pop's commit, as for any write.
//   - A follower's client that goes away, or that CLIENT UNBLOCK answers
//     on the follower, sends a cancel ('C'): the leader answers the unit
//     as unblocked (timeout-like, or -UNBLOCKED), or drops it.
//   - The unit's ID is (session, client, seq); a follower reserves seq+1
//     for its serve: the leader records that ID, in the entry of the
//     served pop or before it, when it serves the client. So whether a
//     pop happened is a question the replicated table answers.
//   - Leadership changes. A leader that stops serving answers its blocked
//     forwarded units "REBLOCK" (nothing was popped; its own clients run
//     their command again, now forwarded). A follower that lost its
//     connection after the interim frame asks the (new) leader ('Q')
//     whether the serve ID is in its table (a new leader has applied every
//     committed entry before serving, and an entry it does not hold can no
//     longer commit) or, on the same leader, cancels the waiting unit. Not
//     served: the command is sent again as a new unit, with what is left
//     of its timeout. Served, or no answer within leader-wait-ms: -UNCERTAIN,
//     since a pop may have happened. A served pop whose entry is not
//     committed when leadership is lost gets -UNCERTAIN as any write.
const (
	frameBlocked = 'b' // the leader's interim answer: the unit blocked
	frameCancel  = 'C' // a follower's client stopped waiting
	frameQuery   = 'Q' // was this blocked unit served?
)

// A 'Q' frame's mode says what the follower asks and which answers it
// reads (forwardServer.queryAnswer). A follower without modes sends 0
// and reads 0 or 1; a leader without them reads any mode as 0.
const (
	queryServedOnly CancelMode = 0 // blocked: 0 not served, 1 served
	queryAnswer     CancelMode = 1 // not known to have blocked: 1, 2+answer, 3 blocked and dropped
	queryBlocked    CancelMode = 2 // blocked: 0, 1, or 2+answer
)

// errReblock answers a blocked forwarded unit whose leader stopped
// serving: nothing was popped; the follower sends the command again.
var errReblock = errors.New("REBLOCK the leader stopped serving while the command was blocked")

// runBlocked waits for a blocked forwarded unit's answer and its commit.
func (n *Node) runBlocked(b BlockedUnit) ([]byte, uint64, error) {
	data, ticket, rerun := b.Wait()
	if rerun {
		return nil, 0, errReblock
	}
	if ticket != 0 {
		if err := n.prop.Wait(ticket, 0); err != nil {
			return nil, 0, err
		}
	}
	return data, n.prop.doneIndex.Load(), nil
}

// queryServed answers a follower that lost its connection while a unit
// was blocked: it cancels the unit if this leader still holds it blocked,
// and reports whether it was served (its serve ID is in the table).
func (n *Node) queryServed(session, client, seq uint64) (served bool, err error) {
	n.door.Lock()
	defer n.door.Unlock()
	if n.serving.Load() == 0 {
		return false, errNotLeader
	}
	if n.exec.CancelForwarded(session, client, seq, CancelDrop) {
		return false, nil
	}
	return n.fsm.seenUnit(unitID{session, client, seq + 1}), nil
}

// forwardUnit is the one loop of Forward (h nil: a unit that does not
// block, answered within applyTimeout) and ForwardBlocking: it sends u,
// resends it when the leader refused it before running (statusRetry) or,
// blocking, asked it to block again (statusReblock, with h.Refresh), waits
// for a leader while there is none, and after a broken link asks the
// leader what became of it instead of sending it again.
func (n *Node) forwardUnit(u *Unit, h *BlockingHooks) ([]byte, error) {
	deadline := time.Now().Add(n.cfg.leaderWait())
	waited := false
	// again prepares a blocking unit to be sent anew (new sequence
	// numbers, what is left of its timeout)
	again := func() bool {
		deadline = time.Now().Add(n.cfg.leaderWait())
		return h.Refresh(u)
	}
	for {
		if n.Serving() {
			return nil, ErrLocal
		}
		if h != nil && h.Left != nil && !h.Left(u) {
			return nil, ErrTimedOut
		}
		u.Session = n.fwd.session
		body := u.encode(nil)
		blocked := false
		var a answer
		var err error
		if h == nil {
			a, err = n.fwd.call(frameUnit, body, n.cfg.applyTimeout())
		} else {
			a, err = n.fwd.callBlocking(body, func(rank uint64) {
				blocked = true
				h.Blocked(rank)
			})
		}
		if errors.Is(err, errConnLost) {
			// the link broke (or the answer is late): the leader that ran
			// the unit keeps its answer
			var kept *answer
			if !blocked {
				var resend bool
				if kept, resend = n.askAnswer(u); resend && h != nil {
					// it blocked and was dropped with its link: nothing popped
					if !again() {
						return nil, ErrTimedOut
					}
					continue
				}
			} else {
				served, ka, ok := n.askServed(u)
				switch {
				case ka != nil:
					kept = ka
				case !ok || served:
					n.stats.Unknown.Add(1)
					return nil, ErrUnknown
				default:
					if !again() {
						return nil, ErrTimedOut
					}
					continue
				}
			}
			if kept != nil {
				a, err = *kept, nil
			}
		}
		switch {
		case err == nil && a.ok():
			n.stats.Forwarded.Add(1)
			if !n.waitApplied(a.index, n.cfg.applyTimeout()) {
				return nil, ErrUnknown
			}
			return a.data, nil
		case err == nil && a.status == statusRetry:
			// refused before running: safe to send again
		case err == nil && a.status == statusReblock && h != nil:
			if !again() {
				return nil, ErrTimedOut
			}
			continue
		case err == nil:
			n.stats.ForwardErrors.Add(1)
			return nil, errors.New(string(a.data))
		case errors.Is(err, errConnLost):
			n.stats.ForwardErrors.Add(1)
			n.stats.Unknown.Add(1)
			return nil, ErrUnknown
		}
		// no leader, or it refused: wait for the next one
		if !waited {
			waited = true
			n.stats.LeaderWaits.Add(1)
		}
		if time.Now().After(deadline) {
			n.stats.ClusterDown.Add(1)
			return nil, ErrClusterDown
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-n.closing:
			return nil, ErrClusterDown
		}
	}
}

// askServed asks the leader (the same or a new one) whether u, blocked
// when the connection was lost, was served, and for its answer when the
// same leader kept it (kept). ok is false when no leader answered within
// leader-wait-ms.
func (n *Node) askServed(u *Unit) (served bool, kept *answer, ok bool) {
	body := binary.AppendUvarint(nil, u.Client)
	body = binary.AppendUvarint(body, u.Seq)
	body = append(body, byte(queryBlocked))
	deadline := time.Now().Add(n.cfg.leaderWait())
	for time.Now().Before(deadline) {
		if n.Serving() {
			// this node leads now: its table has every committed entry
			n.door.Lock()
			served = n.fsm.seenUnit(unitID{n.fwd.session, u.Client, u.Seq + 1})
			n.door.Unlock()
			return served, nil, true
		}
		a, err := n.fwd.call(frameQuery, body, 2*n.cfg.leaderWait())
		if err == nil && a.ok() {
			if len(a.data) > 0 && a.data[0] == 2 {
				if ka, err := decodeAnswer(a.data[1:], a.proto); err == nil {
					return true, &ka, true
				}
			}
			return len(a.data) > 0 && a.data[0] != 0, nil, true
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-n.closing:
			return false, nil, false
		}
	}
	return false, nil, false
}

// askAnswer asks the leader for the answer of u, which did not block (or
// did not say so) before its link broke: the leader that ran it keeps
// each client's last answer (keptAnswer). nil when it has none (another
// leader, an answer too long, the unit never arrived) or no leader
// answered within leader-wait-ms: the outcome is then unknown. resend:
// its command blocked there and was dropped unserved.
func (n *Node) askAnswer(u *Unit) (kept *answer, resend bool) {
	body := binary.AppendUvarint(nil, u.Client)
	body = binary.AppendUvarint(body, u.Seq)
	body = append(body, byte(queryAnswer))
	deadline := time.Now().Add(n.cfg.leaderWait())
	for time.Now().Before(deadline) && !n.Serving() {
		a, err := n.fwd.call(frameQuery, body, 2*n.cfg.leaderWait())
		if err == nil && a.ok() {
			if len(a.data) > 0 && a.data[0] == 2 {
				if ka, err := decodeAnswer(a.data[1:], a.proto); err == nil {
					return &ka, false
				}
			}
			return nil, len(a.data) > 0 && a.data[0] == 3
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-n.closing:
			return nil, false
		}
	}
	return nil, false
}

// callBlocking sends a unit that may block: no timeout applies; blocked
// is called when the leader's interim frame arrives.
func (f *forwarder) callBlocking(body []byte, blocked func(rank uint64)) (answer, error) {
	_, ch, err := f.request(frameUnit, body, 2) // the interim frame, then the answer
	if err != nil {
		return answer{}, err
	}
	for {
		select {
		case a, ok := <-ch:
			if !ok {
				return answer{}, errConnLost
			}
			if a.interim {
				blocked(a.index)
				continue
			}
			return a, nil
		case <-f.n.closing:
			return answer{}, errConnLost
		}
	}
}

// decodeCancel reads a cancel or query frame's body.
func decodeCancel(p []byte) (client, seq uint64, mode CancelMode, err error) {
	r := &reader{p: p}
	client, seq = r.u(), r.u()
	if len(r.p) > 0 {
		mode = CancelMode(r.byte())
	}
	return client, seq, mode, r.err
}
