package engine

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// zdict maps a sorted set's members to their skiplist nodes: a chained
// hash table whose chains run through the nodes themselves (zslNode.hnext),
// so a member costs one bucket pointer here and no separate entry. Its
// power-of-two buckets give ZSCAN Redis's reverse-binary cursor, which
// returns every member present for the whole scan even while the table
// grows or shrinks. The hash is unseeded xxhash: every replica builds the
// same table, so ZSCAN replies agree across nodes.
type zdict struct {
	buckets []*zslNode
	count   int
}

func zhash(s string) uint64 { return xxhash.Sum64String(s) }

func (d *zdict) find(member string) *zslNode {
	if d.count == 0 {
		return nil
	}
	for n := d.buckets[zhash(member)&uint64(len(d.buckets)-1)]; n != nil; n = n.hnext {
		if n.member == member {
			return n
		}
	}
	return nil
}

// insert adds n, whose member must be absent.
func (d *zdict) insert(n *zslNode) {
	if d.count >= len(d.buckets) {
		d.resize(max(4, 2*len(d.buckets)))
	}
	b := zhash(n.member) & uint64(len(d.buckets)-1)
	n.hnext = d.buckets[b]
	d.buckets[b] = n
	d.count++
}

// remove unlinks member's node and returns it (nil when absent).
func (d *zdict) remove(member string) *zslNode {
	if d.count == 0 {
		return nil
	}
	p := &d.buckets[zhash(member)&uint64(len(d.buckets)-1)]
	for ; *p != nil; p = &(*p).hnext {
		if n := *p; n.member == member {
			*p = n.hnext
			n.hnext = nil
			d.count--
			if len(d.buckets) > 16 && d.count*8 < len(d.buckets) {
				d.resize(len(d.buckets) / 2)
			}
			return n
		}
	}
	return nil
}

func (d *zdict) resize(size int) {
	nb := make([]*zslNode, size)
	mask := uint64(size - 1)
	for _, n := range d.buckets {
		for n != nil {
			next := n.hnext
			b := zhash(n.member) & mask
			n.hnext = nb[b]
			nb[b] = n
			n = next
		}
	}
	d.buckets = nb
}

// scan calls fn for every node of the bucket cursor v names and returns the
// next cursor (0 when the scan is complete), as Redis's dictScan.
func (d *zdict) scan(v uint64, fn func(*zslNode)) uint64 {
	if d.count == 0 {
		return 0
	}
	mask := uint64(len(d.buckets) - 1)
	for n := d.buckets[v&mask]; n != nil; n = n.hnext {
		fn(n)
	}
	v |= ^mask
	v = bits.Reverse64(v)
	v++
	return bits.Reverse64(v)
}
