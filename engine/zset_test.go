package engine

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

type naiveElem struct {
	score  float64
	member string
}

type naiveZset []naiveElem

func (n naiveZset) sorted() naiveZset {
	sort.Slice(n, func(i, j int) bool { return zless(n[i].score, n[i].member, n[j].score, n[j].member) })
	return n
}

func (n naiveZset) find(m string) int {
	for i, e := range n {
		if e.member == m {
			return i
		}
	}
	return -1
}

// check compares every structural view of z with the naive model.
func checkZset(t *testing.T, zs *zset, model naiveZset, step int) {
	t.Helper()
	z := zs.view(new(zskip))
	if zs.len() != len(model) || z.len() != len(model) || (!z.view && z.dict.count != len(model)) {
		t.Fatalf("step %d: len %d dict %d model %d", step, z.len(), z.dict.count, len(model))
	}
	i := 0
	var prev *zslNode
	for x := z.zsl.first(); x != nil; x = x.lv(0).forward {
		if x.score != model[i].score || x.member != model[i].member {
			t.Fatalf("step %d: pos %d got (%v,%q) want (%v,%q)", step, i, x.score, x.member, model[i].score, model[i].member)
		}
		if x.backward != prev {
			t.Fatalf("step %d: bad backward at %d", step, i)
		}
		if r := z.zsl.rank(x.score, x.member); r != i+1 {
			t.Fatalf("step %d: rank of %q = %d want %d", step, x.member, r, i+1)
		}
		if z.zsl.byRank(i+1) != x {
			t.Fatalf("step %d: byRank(%d) wrong", step, i+1)
		}
		if z.rankOf(x) != i+1 || z.byRank(i+1) != x {
			t.Fatalf("step %d: encoding rank of %q wrong", step, x.member)
		}
		if z.find(x.member) != x {
			t.Fatalf("step %d: dict lookup of %q wrong", step, x.member)
		}
		if s, ok := zs.score(x.member); !ok || s != x.score {
			t.Fatalf("step %d: score of %q wrong", step, x.member)
		}
		if r, ok := zs.rank(x.member); !ok || r != i {
			t.Fatalf("step %d: rank of %q = %d want %d", step, x.member, r, i)
		}
		prev = x
		i++
	}
	if z.zsl.tail != prev {
		t.Fatalf("step %d: bad tail", step)
	}
}

func TestZsetProperty(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		z := &zset{}
		if seed%2 == 0 {
			z.toSkip(false) // even seeds: skiplist from the start
		}
		var model naiveZset
		nmembers := 20 + r.Intn(400)
		member := func() string { return fmt.Sprintf("m%d", r.Intn(nmembers)) }
		score := func() float64 { return float64(r.Intn(50)) / 2 }
		for step := 0; step < 3000; step++ {
			switch op := r.Intn(10); op {
			case 0, 1, 2, 3: // add or update
				m, s := member(), score()
				if _, ok := z.score(m); ok {
					z.setScore(m, s)
					model[model.find(m)].score = s
				} else {
					z.add(s, []byte(m), &defaultLimits)
					ns, _ := z.score(m)
					model = append(model, naiveElem{ns, m})
				}
				model.sorted()
			case 4, 5: // remove
				m := member()
				got := z.remove(m)
				i := model.find(m)
				if got != (i >= 0) {
					t.Fatalf("remove %q: %v", m, got)
				}
				if i >= 0 {
					model = append(model[:i], model[i+1:]...)
				}
			case 6: // score range queries and deletion
				rg := scoreRange{min: score(), max: score(), minEx: r.Intn(2) == 0, maxEx: r.Intn(2) == 0}
				var in naiveZset
				for _, e := range model {
					if rg.gteMin(e.score) && rg.lteMax(e.score) {
						in = append(in, e)
					}
				}
				v := z.view(new(zskip))
				f, l := v.zsl.firstInRange(&rg), v.zsl.lastInRange(&rg)
				if got := z.countInRange(&rg); got != len(in) {
					t.Fatalf("seed %d step %d: count %d want %d", seed, step, got, len(in))
				}
				if len(in) == 0 {
					if f != nil || l != nil {
						t.Fatalf("seed %d step %d: range %+v should be empty", seed, step, rg)
					}
				} else if f == nil || l == nil || f.member != in[0].member || l.member != in[len(in)-1].member {
					t.Fatalf("seed %d step %d: range %+v first/last wrong", seed, step, rg)
				}
				if r.Intn(4) == 0 {
					n := z.deleteRangeByScore(&rg)
					if n != len(in) {
						t.Fatalf("deleteRangeByScore removed %d want %d", n, len(in))
					}
					kept := model[:0]
					for _, e := range model {
						if !(rg.gteMin(e.score) && rg.lteMax(e.score)) {
							kept = append(kept, e)
						}
					}
					model = kept
				}
			case 7: // rank deletion
				if len(model) > 0 && r.Intn(3) == 0 {
					a := 1 + r.Intn(len(model))
					b := a + r.Intn(5)
					n := z.deleteRangeByRank(a, b)
					end := min(b, len(model))
					if n != end-a+1 {
						t.Fatalf("deleteRangeByRank(%d,%d) removed %d", a, b, n)
					}
					model = append(model[:a-1], model[end:]...)
				}
			case 8: // full ZSCAN covers every member exactly as present
				seen := map[string]bool{}
				cur := uint64(0)
				for {
					if z.isLP() {
						v := z.view(new(zskip))
						for x := v.zsl.first(); x != nil; x = x.lv(0).forward {
							seen[x.member] = true
						}
						break
					}
					cur = z.sk().dict.scan(cur, func(n *zslNode) { seen[n.member] = true })
					if cur == 0 {
						break
					}
				}
				if len(seen) != len(model) {
					t.Fatalf("scan saw %d of %d", len(seen), len(model))
				}
			case 9: // clone
				cp := z.clone(0)
				checkZset(t, &cp, model, step)
			}
			checkZset(t, z, model, step)
		}
	}
}

// TestZsetLex checks lex ranges on a set with equal scores against a
// naive filter.
func TestZsetLex(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for round := 0; round < 200; round++ {
		z := newZskip()
		var members []string
		n := r.Intn(300)
		for i := 0; i < n; i++ {
			m := fmt.Sprintf("%c%c", 'a'+r.Intn(26), 'a'+r.Intn(26))
			if z.find(m) == nil {
				z.add(0, []byte(m), &defaultLimits)
				members = append(members, m)
			}
		}
		sort.Strings(members)
		bound := func() lexBound {
			switch r.Intn(8) {
			case 0:
				return lexBound{inf: -1}
			case 1:
				return lexBound{inf: 1}
			}
			return lexBound{s: string(rune('a' + r.Intn(26))), ex: r.Intn(2) == 0}
		}
		lr := lexRange{min: bound(), max: bound()}
		var in []string
		for _, m := range members {
			if lr.gteMin(m) && lr.lteMax(m) {
				in = append(in, m)
			}
		}
		f, l := z.firstInLex(&lr), z.lastInLex(&lr)
		if len(in) == 0 {
			if f != nil || l != nil {
				t.Fatalf("round %d: %+v should be empty", round, lr)
			}
			continue
		}
		if f == nil || l == nil || f.member != in[0] || l.member != in[len(in)-1] {
			t.Fatalf("round %d: %+v first/last wrong", round, lr)
		}
	}
}

// TestZskiplistTallNodes inserts nodes of every level (header growth, the
// 8- and 32-level node types) and checks order, ranks and deletion.
func TestZskiplistTallNodes(t *testing.T) {
	var zsl zskiplist
	zsl.init()
	n := 200
	for i := 0; i < n; i++ {
		k := (i * 7919) % n
		zsl.insertNode(newZslNode(1+k%zslMaxLevel, float64(k), fmt.Sprint(k)))
	}
	for r := 1; r <= n; r++ {
		x := zsl.byRank(r)
		if x == nil || x.score != float64(r-1) || zsl.rank(x.score, x.member) != r {
			t.Fatalf("rank %d wrong", r)
		}
	}
	for i := 0; i < n; i += 2 {
		if !zsl.delete(float64(i), fmt.Sprint(i)) {
			t.Fatalf("delete %d", i)
		}
	}
	i := 1
	for x := zsl.first(); x != nil; x = x.lv(0).forward {
		if x.score != float64(i) {
			t.Fatalf("after delete: got %v want %d", x.score, i)
		}
		i += 2
	}
	if zsl.length != n/2 || zsl.tail.score != float64(n-1) {
		t.Fatalf("length %d tail %v", zsl.length, zsl.tail.score)
	}
}
