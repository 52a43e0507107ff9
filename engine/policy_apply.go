package engine

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
)

// Whole-registry changes: RL.POLICY APPLY (a set of policies replaces the
// registry), RL.POLICY DUMP and RESTORE. Each is one unit whose effect is
// LIMITDB.POLICY LOAD of the whole resulting registry (registryEnc), so a
// follower replaces its registry in one step and never holds half of a
// change; the record carries every field (versions, times, users, live
// deadlines, histories, overrides), so applying it reads no clock.

const (
	errPolicyPayload   = "ERR RL.POLICY RESTORE payload version or checksum are wrong"
	errPolicyBadDump   = "ERR RL.POLICY RESTORE payload does not hold a valid registry"
	errPolicyBusy      = "ERR the policy registry is not empty (RESTORE it with REPLACE)"
	policyDumpMagic    = "LDBP"
	policyDumpVersion  = 1
	policyDumpTrailLen = 2 + 8 // format version, CRC64, little-endian as in Redis DUMP
)

var errRegistry = errors.New("bad policy registry")

// encodeRegistry is the whole registry as netstrings: the version
// counter, the number of policies, then each policy's record (the aux
// field's value, policy_rdb.go) in name order.
func encodeRegistry(r *Policies) string {
	var w policyEnc
	w.int(r.Version)
	names := r.Names()
	w.int(int64(len(names)))
	for _, n := range names {
		w.str(encodePolicy(r.m[n]))
	}
	return string(w.b)
}

// decodeRegistry reads what encodeRegistry wrote.
func decodeRegistry(s string) (Policies, error) {
	d := &policyDec{s: s}
	r := Policies{Version: d.int()}
	n := d.int()
	if d.err || r.Version < 0 || n < 0 || n > int64(len(s)) {
		return Policies{}, errRegistry
	}
	for range n {
		ok, err := r.loadAux(auxPolicy, d.str())
		if d.err || !ok || err != nil {
			return Policies{}, errRegistry
		}
	}
	if d.s != "" {
		return Policies{}, errRegistry
	}
	return r, nil
}

// cmdLimitdbPolicyLoad: LIMITDB.POLICY LOAD registry — the effect of
// RL.POLICY APPLY and RESTORE: replaces the whole registry. Reply +OK.
func cmdLimitdbPolicyLoad(c *Ctx, argv [][]byte) {
	r, err := decodeRegistry(string(argv[2]))
	if err != nil {
		c.W.Error(errPolicyEffect)
		return
	}
	r.adoptStats(&c.E.Policies) // a node's counters outlive the swap
	c.E.Policies = r
	c.E.Stats.Dirty++
	c.W.OK()
}

// loadEffect records the registry as it now is as this unit's effect.
func (c *Ctx) loadEffect() {
	c.E.Stats.Dirty++
	c.Rewrite(Args("LIMITDB.POLICY").S("LOAD", encodeRegistry(&c.E.Policies)))
}

// samePolicy: a and b have the same parameters (what APPLY compares).
func samePolicy(a, b *RLPolicy) bool {
	return a.Params == b.Params && a.Shadow == b.Shadow && a.Near == b.Near && a.Desc == b.Desc
}

// cmdPolicyApply: RL.POLICY APPLY [IFVERSION v] [DRYRUN] [RESETKEYS]
// [FORCE] [POLICY name <RL.POLICY SET's options> ...] — the given
// policies become the whole registry, in one unit. A policy whose
// parameters are those it has is unchanged (it keeps its version, times
// and history); every added or changed one takes the same new version;
// a policy not given is removed. Overrides of a kept policy stay (they
// must fit its new parameters); a removed policy's go with it.
// IFVERSION v: only if the registry's version (the last one given) is v;
// IFVERSION inside a POLICY compares that policy's, as SET's. Changing a
// live policy's ALGO needs RESETKEYS (the policy's or the global one),
// removing a policy with live keys needs FORCE, as SET and DEL. DRYRUN
// answers the same without changing anything. Reply: map added, changed,
// removed, unchanged (arrays of names in byte order), version (the
// registry's version after the change; with DRYRUN, the one it would
// have). The effect is LIMITDB.POLICY LOAD of the new registry; the
// notification "apply <version>" (none when nothing changed).
func cmdPolicyApply(c *Ctx, argv [][]byte) {
	o, n, ok := c.parseChangeOpts(argv[2:], true)
	if !ok {
		return
	}
	ifVersion, dry, resetAll, force := o.ifVersion, o.dry, o.resetKeys, o.force
	i := 2 + n
	var specs []policySpec
	for i < len(argv) {
		if i+1 >= len(argv) {
			c.W.Error(ErrSyntax)
			return
		}
		s, n, ok := c.parsePolicySpec(argv[i+1], argv[i+2:], true)
		if !ok {
			return
		}
		for j := range specs {
			if specs[j].p.Name == s.p.Name {
				c.W.Error("ERR policy '" + s.p.Name + "' appears twice in RL.POLICY APPLY")
				return
			}
		}
		specs = append(specs, s)
		i += 2 + n
	}
	reg := &c.E.Policies
	if ifVersion >= 0 && reg.Version != ifVersion {
		c.W.Error("ERR version mismatch: the registry is at version " + strconv.FormatInt(reg.Version, 10) +
			", IFVERSION " + strconv.FormatInt(ifVersion, 10) + " (nothing changed)")
		return
	}
	var added, changed, removed, unchanged []string
	given := make(map[string]bool, len(specs))
	for _, s := range specs {
		given[s.p.Name] = true
		old := reg.m[s.p.Name]
		if !c.checkVersion([]byte(s.p.Name), old, s.ifVersion) {
			return
		}
		switch {
		case old == nil:
			added = append(added, s.p.Name)
		case samePolicy(old, s.p):
			unchanged = append(unchanged, s.p.Name)
		default:
			if !c.checkReplace(old, s.p, s.resetKeys || resetAll) {
				return
			}
			changed = append(changed, s.p.Name)
		}
	}
	for _, n := range reg.Names() {
		if given[n] {
			continue
		}
		if p := reg.m[n]; p.LiveUntil > c.Now && !force {
			c.W.Error("ERR policy '" + n + "' may have live keys until " + strconv.FormatInt(p.LiveUntil, 10) +
				" (unix ms): remove it with FORCE")
			return
		}
		removed = append(removed, n)
	}
	v := reg.Version
	if len(added)+len(changed)+len(removed) > 0 {
		v++
	}
	if !dry && v != reg.Version {
		for _, s := range specs {
			old := reg.m[s.p.Name]
			if old != nil && samePolicy(old, s.p) {
				continue
			}
			c.stamp(s.p, old, v)
			// RESETKEYS marks only an ALGO change, as SET's would
			reset := (s.resetKeys || resetAll) && old != nil && old.Params.Algo != s.p.Params.Algo
			reg.put(s.p, reset)
		}
		for _, n := range removed {
			delete(reg.m, n)
		}
		reg.Version = v
		c.loadEffect()
		c.notifyPolicy("apply " + strconv.FormatInt(v, 10))
	}
	w := c.W
	w.Map(5)
	for _, l := range []struct {
		name  string
		names []string
	}{{"added", added}, {"changed", changed}, {"removed", removed}, {"unchanged", unchanged}} {
		slices.Sort(l.names)
		w.BulkString(l.name)
		w.Array(len(l.names))
		for _, n := range l.names {
			w.BulkString(n)
		}
	}
	w.BulkString("version")
	w.Int(v)
}

// cmdPolicyDump: RL.POLICY DUMP — the whole registry as one bulk string:
// "LDBP", the registry (encodeRegistry), the format version (2 bytes) and
// the CRC64 of everything before it (8 bytes, Redis DUMP's checksum).
func cmdPolicyDump(c *Ctx, argv [][]byte) {
	b := append([]byte(policyDumpMagic), encodeRegistry(&c.E.Policies)...)
	b = binary.LittleEndian.AppendUint16(b, policyDumpVersion)
	b = binary.LittleEndian.AppendUint64(b, crc64Update(0, b))
	c.W.Bulk(b)
}

// readPolicyDump checks a DUMP payload and decodes its registry.
func readPolicyDump(b []byte) (Policies, string) {
	if len(b) < len(policyDumpMagic)+policyDumpTrailLen || string(b[:len(policyDumpMagic)]) != policyDumpMagic {
		return Policies{}, errPolicyPayload
	}
	n := len(b) - 8
	if binary.LittleEndian.Uint16(b[n-2:]) != policyDumpVersion || binary.LittleEndian.Uint64(b[n:]) != crc64Update(0, b[:n]) {
		return Policies{}, errPolicyPayload
	}
	r, err := decodeRegistry(string(b[len(policyDumpMagic) : n-2]))
	if err != nil {
		return Policies{}, errPolicyBadDump
	}
	return r, ""
}

// cmdPolicyRestore: RL.POLICY RESTORE payload [REPLACE] — the registry
// becomes the payload's (RL.POLICY DUMP), in one unit. Without REPLACE
// the registry must hold no policy. The records keep what they held
// (parameters, times, users, histories, overrides), except that a
// version not above the registry's version at RESTORE becomes the next
// one, so that no IFVERSION taken before matches a different record;
// a policy replacing one of another algorithm is marked as changed with
// RESETKEYS (its live keys start full), and a policy REPLACE drops goes
// without DEL's live-key check. Reply: the number of policies. A payload
// whose format version or checksum is wrong (a flipped byte) or that
// does not decode is refused and nothing changes. The effect is
// LIMITDB.POLICY LOAD; the notification "restore <version>".
func cmdPolicyRestore(c *Ctx, argv [][]byte) {
	replace := len(argv) == 4 && EqualFold(argv[3], "replace")
	if len(argv) > 3 && !replace {
		c.W.Error(ErrSyntax)
		return
	}
	r, msg := readPolicyDump(argv[2])
	if msg != "" {
		c.W.Error(msg)
		return
	}
	cur := &c.E.Policies
	if cur.Len() > 0 && !replace {
		c.W.Error(errPolicyBusy)
		return
	}
	base := cur.Version
	r.Version = max(r.Version, base)
	for _, p := range r.m {
		if p.Version <= base {
			p.Version = base + 1
			r.Version = max(r.Version, base+1)
		}
		if old := cur.m[p.Name]; old != nil {
			p.LiveUntil = max(p.LiveUntil, old.LiveUntil)
			if old.Params.Algo != p.Params.Algo {
				p.ResetMs = c.Now
			}
		}
	}
	r.adoptStats(cur)
	c.E.Policies = r
	c.loadEffect()
	c.notifyPolicy("restore " + strconv.FormatInt(r.Version, 10))
	c.W.Int(int64(r.Len()))
}
