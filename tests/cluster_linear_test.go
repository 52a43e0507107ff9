package tests

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

// TestClusterLinearizable records a register (SET/GET) and a counter
// (INCR/GET) history from concurrent clients spread over every node
// while the leader is killed and restarted and then cut off and healed,
// and checks it with porcupine (a linearizability checker; Jepsen's
// Knossos algorithm in Go, chosen for being the maintained Go
// implementation). An operation whose outcome is unknown (no reply,
// UNCERTAIN) stays in the history with an open end: it may take effect at
// any time after its call, or never. A refused one (CLUSTERDOWN,
// TRYAGAIN: not executed) is dropped, as is a read without a reply.
func TestClusterLinearizable(t *testing.T) {
	c := mustCluster(t, 3, "--leader-wait-ms", "1000")
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var mu sync.Mutex
	var regOps, ctrOps []porcupine.Operation
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const clients = 6
	for k := 0; k < clients; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(k)))
			ctx := context.Background()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.Intn(len(c.nodes))
				if c.nodes[i].cmd == nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				cli := c.cli(i)
				cctx, cancel := context.WithTimeout(ctx, 4*time.Second)
				op := porcupine.Operation{ClientId: k, Call: now()}
				switch rng.Intn(4) {
				case 0: // register write
					v := strconv.Itoa(k*100000 + n)
					op.Input = regInput{write: true, v: v}
					err := cli.Set(cctx, "reg", v, 0).Err()
					op.Return = now()
					switch outcome(err) {
					case done:
						op.Output = ""
					case unknown:
						op.Return = math.MaxInt64
						op.Output = ""
					case refused:
						cancel()
						continue
					}
					mu.Lock()
					regOps = append(regOps, op)
					mu.Unlock()
				case 1: // register read
					op.Input = regInput{}
					v, err := cli.Get(cctx, "reg").Result()
					op.Return = now()
					if errors.Is(err, redis.Nil) {
						v, err = "", nil
					}
					if err == nil {
						op.Output = v
						mu.Lock()
						regOps = append(regOps, op)
						mu.Unlock()
					}
				case 2: // counter increment
					op.Input = ctrInput{incr: true}
					v, err := cli.Incr(cctx, "ctr").Result()
					op.Return = now()
					switch outcome(err) {
					case done:
						op.Output = v
					case unknown:
						op.Return = math.MaxInt64
						op.Output = int64(-1)
					case refused:
						cancel()
						continue
					}
					mu.Lock()
					ctrOps = append(ctrOps, op)
					mu.Unlock()
				default: // counter read
					op.Input = ctrInput{}
					v, err := cli.Get(cctx, "ctr").Int64()
					op.Return = now()
					if errors.Is(err, redis.Nil) {
						v, err = 0, nil
					}
					if err == nil {
						op.Output = v
						mu.Lock()
						ctrOps = append(ctrOps, op)
						mu.Unlock()
					}
				}
				cancel()
				time.Sleep(time.Duration(rng.Intn(3)) * time.Millisecond)
			}
		}(k)
	}
	time.Sleep(2 * time.Second)
	l := c.waitLeader(10 * time.Second)
	c.kill(l)
	time.Sleep(2500 * time.Millisecond)
	c.start(l)
	time.Sleep(2 * time.Second)
	if l2 := c.leader(); l2 >= 0 {
		c.partition(l2)
		time.Sleep(3 * time.Second)
		c.heal()
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("register: %d operations, counter: %d operations", len(regOps), len(ctrOps))
	if len(regOps) < 100 || len(ctrOps) < 100 {
		t.Fatalf("too few operations recorded (%d, %d): the load did not run", len(regOps), len(ctrOps))
	}
	if res := porcupine.CheckOperationsTimeout(registerModel, regOps, 60*time.Second); res == porcupine.Illegal {
		t.Fatal("the register history is not linearizable")
	} else if res == porcupine.Unknown {
		t.Log("register check timed out (inconclusive)")
	}
	if res := porcupine.CheckOperationsTimeout(counterModel, ctrOps, 60*time.Second); res == porcupine.Illegal {
		t.Fatal("the counter history is not linearizable")
	} else if res == porcupine.Unknown {
		t.Log("counter check timed out (inconclusive)")
	}
}

type opOutcome int

const (
	done opOutcome = iota
	unknown
	refused
)

// outcome classifies a write's error: nil is done; CLUSTERDOWN and
// TRYAGAIN were refused before running; anything else (UNCERTAIN, a
// timeout, a dropped connection) may or may not have taken effect.
func outcome(err error) opOutcome {
	switch {
	case err == nil:
		return done
	case strings.HasPrefix(err.Error(), "CLUSTERDOWN"), strings.HasPrefix(err.Error(), "TRYAGAIN"):
		return refused
	}
	return unknown
}

type regInput struct {
	write bool
	v     string
}

var registerModel = porcupine.Model{
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(regInput)
		if in.write {
			return true, in.v
		}
		return output.(string) == state.(string), state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(regInput)
		if in.write {
			return "set(" + in.v + ")"
		}
		return "get() -> " + output.(string)
	},
}

type ctrInput struct{ incr bool }

var counterModel = porcupine.Model{
	Init: func() interface{} { return int64(0) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		s := state.(int64)
		if input.(ctrInput).incr {
			out := output.(int64)
			return out == -1 || out == s+1, s + 1
		}
		return output.(int64) == s, s
	},
}
