package tests

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestFaultsCheckers feeds each fault-suite checker a history with a
// known violation and one without: a checker that cannot fail would
// pass the suite whatever the cluster did.
func TestFaultsCheckers(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }

	// counter: final 2 after 3 acknowledged INCRs (lost), and a value
	// returned twice
	if r := checkCounter([]int64{1, 2, 3}, 0, 2); r.ok {
		t.Errorf("counter: lost increment not found: %s", r.verdict)
	}
	if r := checkCounter([]int64{1, 1}, 1, 2); r.ok {
		t.Errorf("counter: duplicate not found: %s", r.verdict)
	}
	if r := checkCounter([]int64{1, 2}, 2, 5); r.ok {
		t.Errorf("counter: applied twice not found: %s", r.verdict)
	}
	if r := checkCounter([]int64{1, 3}, 1, 3); !r.ok {
		t.Errorf("counter: legal history refused: %s", r.verdict)
	}

	// queue: a lost acknowledged element with no uncertain pop; one
	// delivered twice; one delivered and left
	pushed := map[string]pushRec{"a": {done, ms(10)}, "b": {done, ms(20)}, "c": {unknown, ms(30)}}
	forever := []time.Duration{time.Duration(math.MaxInt64)}
	if r := checkQueue(pushed, map[string]int{"a": 1}, nil, nil); r.ok {
		t.Errorf("queue: lost element not found: %s", r.verdict)
	}
	if r := checkQueue(pushed, map[string]int{"a": 2}, nil, []string{"b"}); r.ok {
		t.Errorf("queue: double delivery not found: %s", r.verdict)
	}
	if r := checkQueue(pushed, map[string]int{"a": 1}, nil, []string{"a", "b"}); r.ok {
		t.Errorf("queue: delivered-and-left not found: %s", r.verdict)
	}
	if r := checkQueue(pushed, map[string]int{"a": 1}, forever, nil); !r.ok {
		t.Errorf("queue: a loss covered by an uncertain pop refused: %s", r.verdict)
	}
	// b was pushed at 20 ms; the only uncertain pop was answered at 15 ms
	if r := checkQueue(pushed, map[string]int{"a": 1}, []time.Duration{ms(15)}, nil); r.ok {
		t.Errorf("queue: a loss after the uncertain pop's reply not found: %s", r.verdict)
	}
	// two lost, one uncertain pop
	if r := checkQueue(pushed, nil, forever, nil); r.ok {
		t.Errorf("queue: two losses against one uncertain pop not found: %s", r.verdict)
	}

	// cas: two committed EXECs wrote 2 (both read 1)
	if r := checkCAS([]int64{1, 2, 2}, 0, 3); r.ok {
		t.Errorf("cas: lost update not found: %s", r.verdict)
	}
	if r := checkCAS([]int64{1, 2, 3}, 1, 4); !r.ok {
		t.Errorf("cas: legal history refused: %s", r.verdict)
	}

	// lua: counter and list disagree; a returned n not at its place
	if r := checkLua(map[string]int64{"x": 1, "y": 2}, nil, 3, []string{"x", "y"}); r.ok {
		t.Errorf("lua: non-atomic script not found: %s", r.verdict)
	}
	if r := checkLua(map[string]int64{"x": 2, "y": 1}, nil, 2, []string{"x", "y"}); r.ok {
		t.Errorf("lua: misplaced tag not found: %s", r.verdict)
	}
	if r := checkLua(map[string]int64{"x": 1}, map[string]bool{"y": true}, 2, []string{"x", "y"}); !r.ok {
		t.Errorf("lua: legal history refused: %s", r.verdict)
	}

	// ratelimit: gcra 10/s: 11 grants inside 50 ms is over 10 + 0.5;
	// the same with a leader change (500 ms of skew) is within 10 + 5.5
	l := rlSpec{key: "k", algo: "gcra", limit: 10, periodMs: 1000}
	var g []span
	for k := 0; k < 11; k++ {
		g = append(g, span{ms(k * 5), ms(k*5 + 1)})
	}
	none := func(a, b time.Duration) time.Duration { return 0 }
	oneChange := func(a, b time.Duration) time.Duration { return 500 * time.Millisecond }
	if ok, note := checkRateBound(l, g, none); ok {
		t.Errorf("ratelimit: over-grant not found: %s", note)
	}
	if ok, note := checkRateBound(l, g, oneChange); !ok {
		t.Errorf("ratelimit: widened bound refused: %s", note)
	}
	sl := rlSpec{key: "k", algo: "sliding-log", limit: 5, periodMs: 500}
	if ok, note := checkRateBound(sl, g[:6], none); ok {
		t.Errorf("ratelimit: sliding-log over-grant not found: %s", note)
	}
	if ok, note := checkRateBound(sl, g[:5], none); !ok {
		t.Errorf("ratelimit: sliding-log legal history refused: %s", note)
	}

	// register: a read of a value never written
	ops := []porcupine.Operation{
		{ClientId: 0, Input: faultRegInput{"a", true, "1"}, Output: "", Call: 0, Return: 10},
		{ClientId: 1, Input: faultRegInput{key: "a"}, Output: "2", Call: 20, Return: 30},
		{ClientId: 1, Input: faultRegInput{"b", true, "2"}, Output: "", Call: 0, Return: 10},
	}
	if r := checkPorcupine("register", faultRegisterModel, ops, 5*time.Second, ""); r.ok {
		t.Errorf("register: illegal history passed: %s", r.verdict)
	}
	ops[1].Output = "1"
	ops = append(ops, porcupine.Operation{ClientId: 2, Input: faultRegInput{"a", true, "3"}, Output: "", Call: 5, Return: math.MaxInt64})
	if r := checkPorcupine("register", faultRegisterModel, ops, 5*time.Second, ""); !r.ok {
		t.Errorf("register: legal history refused: %s", r.verdict)
	}

	// ttl: nil 500 ms into a 1 s TTL; found 300 ms after it; both fine
	// with a leader change's 500 ms of widening
	reads := []ttlRead{
		{key: "a", setCall: 0, setRet: ms(5), getCall: ms(500), getRet: ms(505), found: false},
		{key: "b", setCall: 0, setRet: ms(5), getCall: ms(1300), getRet: ms(1305), found: true},
		{key: "c", setCall: 0, setRet: ms(5), getCall: ms(900), getRet: ms(905), found: true},
		{key: "d", setCall: 0, setRet: ms(5), getCall: ms(1100), getRet: ms(1105), found: false},
	}
	if r := checkTTL(reads, 4, time.Second, none); r.ok || !strings.Contains(r.verdict, "1 reads saw a key expired too early, 1 too late") {
		t.Errorf("ttl: early nil and late value not both found: %s", r.verdict)
	}
	if r := checkTTL(reads, 4, time.Second, oneChange); !r.ok {
		t.Errorf("ttl: widened deadlines refused: %s", r.verdict)
	}
}
