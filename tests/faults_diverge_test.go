package tests

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// divergence explains a digest mismatch after healing: each node's Raft
// position, the digests again a second later (a difference that goes
// away was a node still applying; one that stays is a divergence), and
// every key whose DEBUG DIGEST-VALUE differs between the nodes, with its
// type, absolute deadline and value on each. Every read is local
// (READONLY, DEBUG): the point is what each node holds, not what a
// linearizable read would say.
func (r *faultRun) divergence() []string {
	var out []string
	type nodeCli struct {
		id  string
		cli *redis.Client
	}
	var nodes []nodeCli
	for i, nd := range r.c.nodes {
		if nd.cmd == nil {
			continue
		}
		cli := redis.NewClient(&redis.Options{Addr: r.c.addr(i), MaxRetries: -1, DialTimeout: 2 * time.Second,
			ReadTimeout: 10 * time.Second, PoolSize: 1, Protocol: 2,
			OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
		defer cli.Close()
		nodes = append(nodes, nodeCli{nd.id, cli})
		m := r.c.info(i)
		out = append(out, fmt.Sprintf("divergence: %s: state %s term %s commit %s applied %s last index %s", nd.id,
			m["raft_state"], m["raft_term"], m["raft_commit_index"], m["raft_applied_index"], m["raft_last_index"]))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	time.Sleep(time.Second)
	var ds []string
	for _, n := range nodes {
		d, err := n.cli.Do(ctx, "DEBUG", "DIGEST-STRICT").Text()
		if err != nil {
			d = "error: " + err.Error()
		}
		ds = append(ds, n.id+" "+d)
	}
	out = append(out, "divergence: digests 1 s later: "+strings.Join(ds, ", "))

	// every key any node holds (SCAN skips keys past their deadline that
	// are not deleted yet; DBSIZE counts them)
	keys := map[string]bool{}
	for _, n := range nodes {
		size, _ := n.cli.DBSize(ctx).Result()
		cnt := 0
		var cur uint64
		for {
			ks, next, err := n.cli.Scan(ctx, cur, "*", 1000).Result()
			if err != nil {
				out = append(out, fmt.Sprintf("divergence: SCAN on %s: %v", n.id, err))
				break
			}
			for _, k := range ks {
				keys[k] = true
				cnt++
			}
			if cur = next; cur == 0 {
				break
			}
		}
		out = append(out, fmt.Sprintf("divergence: %s: DBSIZE %d, SCAN %d keys", n.id, size, cnt))
	}
	var all []string
	for k := range keys {
		all = append(all, k)
	}
	sort.Strings(all)
	// per-key digests, pipelined in batches
	digest := make([]map[string]string, len(nodes))
	for j, n := range nodes {
		digest[j] = map[string]string{}
		for b := 0; b < len(all); b += 500 {
			batch := all[b:min(b+500, len(all))]
			args := []any{"DEBUG", "DIGEST-VALUE"}
			for _, k := range batch {
				args = append(args, k)
			}
			vs, err := n.cli.Do(ctx, args...).StringSlice()
			if err != nil {
				out = append(out, fmt.Sprintf("divergence: DEBUG DIGEST-VALUE on %s: %v", n.id, err))
				break
			}
			for x, k := range batch {
				if x < len(vs) {
					digest[j][k] = vs[x]
				}
			}
		}
	}
	shown := 0
	for _, k := range all {
		same := true
		for j := range nodes[1:] {
			same = same && digest[j+1][k] == digest[0][k]
		}
		if same {
			continue
		}
		if shown++; shown > 40 {
			continue
		}
		out = append(out, "divergence: key "+k+" differs:")
		for j, n := range nodes {
			out = append(out, fmt.Sprintf("divergence:   %s: digest %s %s", n.id, digest[j][k], describeKey(ctx, n.cli, k)))
		}
	}
	if shown > 40 {
		out = append(out, fmt.Sprintf("divergence: … %d keys differ in all", shown))
	}
	if shown == 0 {
		out = append(out, fmt.Sprintf("divergence: no key's DIGEST-VALUE differs among the %d keys found (deadlines, scripts, functions or encoding thresholds do)", len(all)))
	}
	return out
}

// describeKey is a key's type, absolute deadline and value (the ends of
// a long list) as one node holds it.
func describeKey(ctx context.Context, cli *redis.Client, k string) string {
	typ, err := cli.Type(ctx, k).Result()
	if err != nil {
		return "TYPE: " + err.Error()
	}
	exp, _ := cli.Do(ctx, "PEXPIRETIME", k).Int64()
	obj, _ := cli.Do(ctx, "DEBUG", "OBJECT", k).Text()
	s := fmt.Sprintf("type %s pexpiretime %d object %q", typ, exp, obj)
	switch typ {
	case "string":
		v, _ := cli.Get(ctx, k).Result()
		if len(v) > 80 {
			v = v[:80] + "…"
		}
		s += fmt.Sprintf(" value %q", v)
	case "list":
		n, _ := cli.LLen(ctx, k).Result()
		head, _ := cli.LRange(ctx, k, 0, 4).Result()
		tail, _ := cli.LRange(ctx, k, -5, -1).Result()
		s += fmt.Sprintf(" len %d head %v tail %v", n, head, tail)
	case "ratelimit":
		v, _ := cli.Do(ctx, "RL.INFO", k).Slice()
		s += fmt.Sprintf(" RL.INFO %v", v)
	case "hash":
		v, _ := cli.HGetAll(ctx, k).Result()
		s += fmt.Sprintf(" fields %v", v)
	}
	return s
}
