package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// rlDecision is an RL.ALLOW … POLICY reply (RESP2: name, value pairs).
type rlDecision map[string]any

func toDecision(v []any) rlDecision {
	d := rlDecision{}
	for i := 0; i+1 < len(v); i += 2 {
		d[fmt.Sprint(v[i])] = v[i+1]
	}
	return d
}

// policySubscriber subscribes to __limitdb__:policy on cli and collects
// the messages.
type policySubscriber struct {
	sub  *redis.PubSub
	mu   sync.Mutex
	msgs []string
}

func subscribePolicy(t *testing.T, cli *redis.Client) *policySubscriber {
	t.Helper()
	ps := &policySubscriber{sub: cli.Subscribe(context.Background(), "__limitdb__:policy")}
	if _, err := ps.sub.Receive(context.Background()); err != nil {
		t.Fatalf("SUBSCRIBE __limitdb__:policy: %v", err)
	}
	ch := ps.sub.Channel()
	go func() {
		for m := range ch {
			ps.mu.Lock()
			ps.msgs = append(ps.msgs, m.Payload)
			ps.mu.Unlock()
		}
	}()
	t.Cleanup(func() { ps.sub.Close() })
	return ps
}

// waitFor waits until every one of want has arrived, in that order
// (others may come between), and fails after d.
func (ps *policySubscriber) waitFor(t *testing.T, d time.Duration, want []string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ps.mu.Lock()
		got := append([]string(nil), ps.msgs...)
		ps.mu.Unlock()
		j := 0
		for _, m := range got {
			if j < len(want) && m == want[j] {
				j++
			}
		}
		if j == len(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("notifications %q, want (in order) %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterPolicyChangesUnderLoad: every parameter of a live policy
// (LIMIT, PERIOD, BURST, NEAR, SHADOW, DESC, ALGO with RESETKEYS, an
// override, a whole APPLY) is changed, through the leader and the
// followers, while clients call RL.ALLOW … POLICY and RL.ALLOWALL …
// POLICY through every node: no call gets an error, each client sees
// the versions only grow, and a subscriber on a follower gets every
// change's notification, in order. Then the registry is dumped on one
// follower and restored (REPLACE) through the other, a flipped byte of
// the payload refused, and every node ends with the same policy.
func TestClusterPolicyChangesUnderLoad(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	nodes := []int{l, (l + 1) % 3, (l + 2) % 3}
	v, err := c.cli(l).Do(ctx, "RL.POLICY", "SET", "live", "LIMIT", "10", "PERIOD", "1000").Int64()
	if err != nil {
		t.Fatal(err)
	}
	c.mustConverge(10 * time.Second)
	sub := subscribePolicy(t, c.cli(nodes[1]))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	var errs []string
	calls := 0
	for g := 0; g < 6; g++ {
		cli := c.cli(nodes[g%3])
		last := int64(0)
		loadLoop(&wg, stop, 3000, func(i int) bool {
			key := "u:" + strconv.Itoa(g) + ":" + strconv.Itoa(i%4)
			var r []any
			var err error
			if i%5 == 4 {
				r, err = cli.Do(ctx, "RL.ALLOWALL", "2", key, "POLICY", "live", "all:"+strconv.Itoa(g), "POLICY", "live").Slice()
				if err == nil {
					r = r[7].([]any)[0].([]any)[12:]
				}
			} else {
				r, err = cli.Do(ctx, "RL.ALLOW", key, "POLICY", "live").Slice()
				if err == nil {
					r = r[10:]
				}
			}
			mu.Lock()
			defer mu.Unlock()
			calls++
			if err != nil {
				errs = append(errs, err.Error())
				return len(errs) < 10
			}
			d := toDecision(r)
			ver, _ := d["version"].(int64)
			if d["policy"] != "live" || ver < last {
				errs = append(errs, fmt.Sprintf("client %d call %d: %v after version %d", g, i, r, last))
			}
			last = ver
			return true
		})
	}
	want := []string{}
	change := func(node int, args ...any) {
		t.Helper()
		time.Sleep(60 * time.Millisecond)
		r, err := c.cli(node).Do(ctx, append([]any{"RL.POLICY"}, args...)...).Result()
		if err != nil {
			t.Errorf("%v through node %d: %v", args, node, err)
			return
		}
		switch args[0] {
		case "SET":
			v = r.(int64)
			want = append(want, "set live "+strconv.FormatInt(v, 10))
		case "OVERRIDE":
			v = r.(int64)
			want = append(want, "override live "+strconv.FormatInt(v, 10)+" "+args[3].(string))
		case "APPLY":
			m := r.([]any)
			v = m[9].(int64)
			want = append(want, "apply "+strconv.FormatInt(v, 10))
		}
	}
	set := func(node int, params ...any) { change(node, append([]any{"SET", "live"}, params...)...) }
	set(nodes[0], "LIMIT", "20", "PERIOD", "1000")
	set(nodes[1], "LIMIT", "20", "PERIOD", "500")
	set(nodes[2], "LIMIT", "20", "PERIOD", "500", "BURST", "5")
	set(nodes[0], "LIMIT", "20", "PERIOD", "500", "BURST", "5", "NEAR", "0.5")
	set(nodes[1], "LIMIT", "20", "PERIOD", "500", "BURST", "5", "NEAR", "0.5", "SHADOW")
	set(nodes[2], "LIMIT", "20", "PERIOD", "500", "BURST", "5", "NEAR", "0.5", "DESC", "changed under load")
	set(nodes[0], "LIMIT", "20", "PERIOD", "500", "BURST", "5", "ALGO", "token-bucket", "RESETKEYS")
	set(nodes[1], "LIMIT", "15", "PERIOD", "700", "ALGO", "sliding-window", "RESETKEYS")
	set(nodes[2], "LIMIT", "8", "PERIOD", "300", "ALGO", "sliding-log", "RESETKEYS")
	set(nodes[0], "LIMIT", "30", "PERIOD", "300", "ALGO", "sliding-log")
	set(nodes[1], "LIMIT", "30", "PERIOD", "300", "ALGO", "fixed-window", "RESETKEYS", "IFVERSION", strconv.FormatInt(v, 10))
	set(nodes[2], "LIMIT", "9", "PERIOD", "250", "ALGO", "leaky-bucket", "BURST", "3", "RESETKEYS")
	change(nodes[1], "OVERRIDE", "live", "SUBJECT", "u:1:1", "LIMIT", "100", "PERIOD", "100")
	change(nodes[2], "APPLY", "RESETKEYS", "POLICY", "live", "LIMIT", "12", "PERIOD", "1000", "ALGO", "gcra", "POLICY", "other", "LIMIT", "1", "PERIOD", "1")
	set(nodes[0], "LIMIT", "12", "PERIOD", "1000", "ALGO", "gcra", "SHADOW")
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	mu.Lock()
	if len(errs) > 0 || calls < 100 {
		t.Fatalf("%d calls, errors: %q", calls, errs)
	}
	mu.Unlock()
	t.Logf("%d calls under %d changes, no error", calls, len(want))
	// the whole registry dumped on a follower and restored through the
	// other, as one unit; a flipped byte is refused there
	dump, err := c.cli(nodes[1]).Do(ctx, "RL.POLICY", "DUMP").Text()
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte(dump)
	bad[len(bad)/2] ^= 1
	if err := c.cli(nodes[2]).Do(ctx, "RL.POLICY", "RESTORE", string(bad), "REPLACE").Err(); err == nil ||
		err.Error() != "ERR RL.POLICY RESTORE payload version or checksum are wrong" {
		t.Fatalf("RESTORE of a flipped byte: %v", err)
	}
	if err := c.cli(nodes[2]).Do(ctx, "RL.POLICY", "RESTORE", dump).Err(); err == nil || !strings.Contains(err.Error(), "REPLACE") {
		t.Fatalf("RESTORE into a registry with policies, without REPLACE: %v", err)
	}
	if n, err := c.cli(nodes[2]).Do(ctx, "RL.POLICY", "RESTORE", dump, "REPLACE").Int(); err != nil || n != 2 {
		t.Fatalf("RESTORE REPLACE: %d %v", n, err)
	}
	v++ // every restored version was not above the registry's: they take the next
	want = append(want, "restore "+strconv.FormatInt(v, 10))
	if n, err := c.cli(nodes[1]).Do(ctx, "RL.POLICY", "DEL", "other").Int(); err != nil || n != 1 {
		t.Fatalf("RL.POLICY DEL other: %d %v", n, err)
	}
	want = append(want, "del other")
	sub.waitFor(t, 10*time.Second, want)
	c.mustConverge(30 * time.Second)
	wantGet := policyGet(t, c.cli(l), "live")
	for _, i := range nodes {
		if got := policyGet(t, c.cli(i), "live"); fmt.Sprint(got) != fmt.Sprint(wantGet) || got["version"] != strconv.FormatInt(v, 10) || got["overrides"] != "1" {
			t.Fatalf("RL.POLICY GET live on node %d: %v, want %v", i, got, wantGet)
		}
	}
}

// TestClusterPolicyShadowSideBySide: the same request stream against a
// shadow policy and its enforcing twin (the same parameters, other keys),
// each request's two calls in one MULTI (one clock reading), through a
// follower: every shadow decision says allowed, with shadow_denied 1
// exactly where the enforcer refused and the same remaining units and
// reset; after SHADOW is turned off the two give identical decisions.
func TestClusterPolicyShadowSideBySide(t *testing.T) {
	c := mustCluster(t, 3)
	ctx := context.Background()
	l := c.waitLeader(10 * time.Second)
	f := (l + 1) % 3
	for _, algo := range []string{"token-bucket", "sliding-window"} {
		params := []any{"LIMIT", "5", "PERIOD", "400", "ALGO", algo}
		for _, p := range [][]any{{"sh:" + algo, "SHADOW"}, {"en:" + algo}} {
			if err := c.cli(l).Do(ctx, append(append([]any{"RL.POLICY", "SET", p[0]}, params...), p[1:]...)...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		pair := func(i int) (sh, en rlDecision) {
			key := "k" + strconv.Itoa(rng.IntN(3))
			cost := strconv.Itoa(1 + rng.IntN(3))
			var a, b *redis.Cmd
			_, err := c.cli(f).TxPipelined(ctx, func(p redis.Pipeliner) error {
				a = p.Do(ctx, "RL.ALLOW", "sh:"+algo+":"+key, "POLICY", "sh:"+algo, "COST", cost)
				b = p.Do(ctx, "RL.ALLOW", "en:"+algo+":"+key, "POLICY", "en:"+algo, "COST", cost)
				return nil
			})
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			ra, _ := a.Slice()
			rb, _ := b.Slice()
			if rng.IntN(4) == 0 {
				time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
			}
			return toDecision(ra), toDecision(rb)
		}
		denied := 0
		for i := 0; i < 200; i++ {
			sh, en := pair(i)
			wantSD := int64(1) - en["allowed"].(int64)
			denied += int(wantSD)
			if sh["allowed"] != int64(1) || sh["shadow_denied"] != wantSD || en["shadow_denied"] != int64(0) ||
				sh["remaining"] != en["remaining"] || sh["reset_after_ms"] != en["reset_after_ms"] || sh["limit"] != en["limit"] {
				t.Fatalf("%s request %d: shadow %v, enforcing %v", algo, i, sh, en)
			}
		}
		if denied < 10 || denied > 190 {
			t.Fatalf("%s: only %d refusals in 200 requests: the stream must both reach the limit and pass", algo, denied)
		}
		if err := c.cli(f).Do(ctx, append([]any{"RL.POLICY", "SET", "sh:" + algo}, params...)...).Err(); err != nil {
			t.Fatal(err)
		}
		refused := 0
		for i := 200; i < 400; i++ {
			sh, en := pair(i)
			delete(sh, "policy")
			delete(en, "policy")
			delete(sh, "version")
			delete(en, "version")
			if fmt.Sprint(sh) != fmt.Sprint(en) {
				t.Fatalf("%s request %d after SHADOW was turned off: %v, enforcing %v", algo, i, sh, en)
			}
			refused += 1 - int(en["allowed"].(int64))
		}
		t.Logf("%s: %d shadow refusals predicted, then %d refusals enforced alike", algo, denied, refused)
	}
}
