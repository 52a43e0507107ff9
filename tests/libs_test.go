package tests

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
	"github.com/ulule/limiter/v3"
	sredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// TestLibs drives real third-party rate-limiter libraries against both the
// reference redis-server and limitdb with the same call sequence and compares
// every decision. Durations derived from the wall clock are compared within a
// tolerance; counts and allow/deny decisions must be identical.

func libClients(t *testing.T) (ref, cand *redis.Client) {
	t.Helper()
	ref = redis.NewClient(&redis.Options{Addr: redisAddr})
	cand = redis.NewClient(&redis.Options{Addr: limitAddr})
	t.Cleanup(func() { ref.Close(); cand.Close() })
	return ref, cand
}

func libUniq(prefix string) string {
	return prefix + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// durClose reports whether two wall-clock-derived durations agree within tol.
func durClose(a, b, tol time.Duration) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= tol
}

func TestLibsRedisRate(t *testing.T) {
	ctx := context.Background()
	ref, cand := libClients(t)
	lr, lc := redis_rate.NewLimiter(ref), redis_rate.NewLimiter(cand)
	key := libUniq("libs:redis_rate")
	const tol = 150 * time.Millisecond

	type step struct {
		op    string // allow, allowN, atMost, reset
		n     int
		limit redis_rate.Limit
	}
	perMin := redis_rate.PerMinute(10)
	perSec := redis_rate.PerSecond(5)
	burst := redis_rate.Limit{Rate: 3, Burst: 6, Period: time.Minute}
	var steps []step
	for i := 0; i < 12; i++ {
		steps = append(steps, step{"allow", 1, perMin})
	}
	steps = append(steps,
		step{"reset", 0, perMin},
		step{"allowN", 4, perMin}, step{"allowN", 7, perMin}, step{"allowN", 6, perMin},
		step{"allowN", 0, perMin}, step{"atMost", 3, perMin}, step{"atMost", 10, perMin},
		step{"atMost", 1, perMin}, step{"allowN", 11, perMin},
		step{"reset", 0, perMin},
		step{"atMost", 20, perMin}, step{"allow", 1, perMin},
	)
	for i := 0; i < 8; i++ {
		steps = append(steps, step{"allow", 1, perSec})
	}
	steps = append(steps, step{"allowN", 2, burst}, step{"allowN", 5, burst}, step{"atMost", 9, burst}, step{"allow", 1, burst})

	denied := 0
	for i, s := range steps {
		k := key
		if s.limit == perSec {
			k += ":s"
		} else if s.limit == burst {
			k += ":b"
		}
		run := func(l *redis_rate.Limiter) (*redis_rate.Result, error) {
			switch s.op {
			case "allow":
				return l.Allow(ctx, k, s.limit)
			case "allowN":
				return l.AllowN(ctx, k, s.limit, s.n)
			case "atMost":
				return l.AllowAtMost(ctx, k, s.limit, s.n)
			default:
				return nil, l.Reset(ctx, k)
			}
		}
		a, errA := run(lr)
		b, errB := run(lc)
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("step %d %s(%d): error redis=%v limitdb=%v", i, s.op, s.n, errA, errB)
		}
		if a == nil || b == nil {
			continue
		}
		if a.Allowed < s.n {
			denied++
		}
		if a.Allowed != b.Allowed || a.Remaining != b.Remaining ||
			(a.RetryAfter < 0) != (b.RetryAfter < 0) ||
			!durClose(a.RetryAfter, b.RetryAfter, tol) || !durClose(a.ResetAfter, b.ResetAfter, tol) {
			t.Errorf("step %d %s(%d) %v:\n redis   %+v\n limitdb %+v", i, s.op, s.n, s.limit, *a, *b)
		}
	}
	if denied < 5 {
		t.Fatalf("sequence too lenient: only %d denials", denied)
	}
	// the key layout must match: same keys with the same TTLs
	for _, suf := range []string{"", ":s", ":b"} {
		k := "rate:" + key + suf
		ta, tb := ref.PTTL(ctx, k).Val(), cand.PTTL(ctx, k).Val()
		if (ta < 0) != (tb < 0) || !durClose(ta, tb, tol) {
			t.Errorf("PTTL %s: redis %v limitdb %v", k, ta, tb)
		}
		va, vb := ref.Get(ctx, k).Val(), cand.Get(ctx, k).Val()
		fa, _ := strconv.ParseFloat(va, 64)
		fb, _ := strconv.ParseFloat(vb, 64)
		if (va == "") != (vb == "") || fa-fb > 1000 || fb-fa > 1000 {
			t.Errorf("GET %s: redis %q limitdb %q", k, va, vb)
		}
	}
}

func TestLibsUluleLimiter(t *testing.T) {
	ctx := context.Background()
	ref, cand := libClients(t)
	mk := func(c *redis.Client, rate limiter.Rate) *limiter.Limiter {
		st, err := sredis.NewStoreWithOptions(c, limiter.StoreOptions{Prefix: "libs-ulule"})
		if err != nil {
			t.Fatal(err)
		}
		return limiter.New(st, rate)
	}
	rate := limiter.Rate{Period: time.Minute, Limit: 5}
	lr, lc := mk(ref, rate), mk(cand, rate)
	key := libUniq("k")

	ops := []struct {
		op string
		n  int64
	}{
		{"peek", 0}, {"get", 0}, {"get", 0}, {"peek", 0}, {"incr", 2},
		{"get", 0}, {"get", 0}, {"get", 0}, {"peek", 0}, {"incr", 3},
		{"reset", 0}, {"peek", 0}, {"incr", 7}, {"get", 0}, {"peek", 0},
	}
	for i, o := range ops {
		run := func(l *limiter.Limiter) (limiter.Context, error) {
			switch o.op {
			case "get":
				return l.Get(ctx, key)
			case "peek":
				return l.Peek(ctx, key)
			case "incr":
				return l.Increment(ctx, key, o.n)
			default:
				return l.Reset(ctx, key)
			}
		}
		a, errA := run(lr)
		b, errB := run(lc)
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Fatalf("op %d %s: error redis=%v limitdb=%v", i, o.op, errA, errB)
		}
		ra, rb := a.Reset, b.Reset
		a.Reset, b.Reset = 0, 0
		if a != b || ra-rb > 1 || rb-ra > 1 {
			t.Errorf("op %d %s(%d):\n redis   %+v reset=%d\n limitdb %+v reset=%d", i, o.op, o.n, a, ra, b, rb)
		}
	}
	// scripts flushed: the store must reload them (NOSCRIPT path)
	if err := ref.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cand.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	a, errA := lr.Get(ctx, key+"x")
	b, errB := lc.Get(ctx, key+"x")
	if fmt.Sprint(errA) != fmt.Sprint(errB) || a.Remaining != b.Remaining || a.Reached != b.Reached {
		t.Errorf("after SCRIPT FLUSH: redis %+v %v limitdb %+v %v", a, errA, b, errB)
	}
}

func TestLibsThrottled(t *testing.T) {
	ctx := context.Background()
	ref, cand := libClients(t)
	key := libUniq("k")
	mk := func(c *redis.Client, q throttled.RateQuota) *throttled.GCRARateLimiterCtx {
		st, err := goredisstore.NewCtx(c, "libs-throttled:")
		if err != nil {
			t.Fatal(err)
		}
		l, err := throttled.NewGCRARateLimiterCtx(st, q)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	quotas := []throttled.RateQuota{
		{MaxRate: throttled.PerMin(10), MaxBurst: 4},
		{MaxRate: throttled.PerSec(20), MaxBurst: 0},
	}
	const tol = 150 * time.Millisecond
	denied := 0
	for qi, q := range quotas {
		lr, lc := mk(ref, q), mk(cand, q)
		k := key + ":" + strconv.Itoa(qi)
		for i, n := range []int{1, 1, 2, 1, 1, 1, 0, 3, 1, 5, 1} {
			la, a, errA := lr.RateLimitCtx(ctx, k, n)
			lb, b, errB := lc.RateLimitCtx(ctx, k, n)
			if fmt.Sprint(errA) != fmt.Sprint(errB) {
				t.Fatalf("quota %d step %d: error redis=%v limitdb=%v", qi, i, errA, errB)
			}
			if la {
				denied++
			}
			if la != lb || a.Limit != b.Limit || a.Remaining != b.Remaining ||
				(a.RetryAfter < 0) != (b.RetryAfter < 0) ||
				!durClose(a.RetryAfter, b.RetryAfter, tol) || !durClose(a.ResetAfter, b.ResetAfter, tol) {
				t.Errorf("quota %d step %d n=%d:\n redis   %v %+v\n limitdb %v %+v", qi, i, n, la, a, lb, b)
			}
		}
		ka := "libs-throttled:" + k
		ta, tb := ref.TTL(ctx, ka).Val(), cand.TTL(ctx, ka).Val()
		if !durClose(ta, tb, time.Second) {
			t.Errorf("TTL %s: redis %v limitdb %v", ka, ta, tb)
		}
	}
	if denied < 3 {
		t.Fatalf("sequence too lenient: only %d denials", denied)
	}
	// the CAS script's error_reply for a missing key
	const cas = "local v = redis.call('get', KEYS[1])\nif v == false then\n  return redis.error_reply(\"key does not exist\")\nend\nreturn 1"
	ea := ref.Eval(ctx, cas, []string{key + ":missing"}).Err()
	eb := cand.Eval(ctx, cas, []string{key + ":missing"}).Err()
	if fmt.Sprint(ea) != fmt.Sprint(eb) {
		t.Errorf("error_reply: redis %q limitdb %q", ea, eb)
	}
}
