package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// Level is how strongly the documents state a requirement (RFC 2119, with
// Autobahn's "non-strict" verdicts): a broken Must fails, a broken Should
// (or a behaviour the documents leave open) warns, Info only informs.
type Level int

const (
	// Must: a broken requirement is a failure.
	Must Level = iota + 1
	// Should: a broken requirement is a warning (a failure under --strict).
	Should
	// Info: the case measures or describes; it never fails.
	Info
)

// String returns "MUST", "SHOULD" or "INFO".
func (l Level) String() string {
	switch l {
	case Must:
		return "MUST"
	case Should:
		return "SHOULD"
	case Info:
		return "INFO"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Phase orders the run (not to be confused with a scenario's stages, its
// load ramp). Cases of PhaseConcurrent run in parallel with each other; the
// other phases run one case at a time, after the previous phase, in id
// order.
type Phase int

const (
	// PhaseConcurrent cases are independent of each other: they create their
	// own rooms and sockets and may run at the same time.
	PhaseConcurrent Phase = iota
	// PhaseSerial cases change global state (fill the instance limit, flood
	// the server) and run alone, after the concurrent ones.
	PhaseSerial
	// PhasePool cases exhaust the server's pool of instances (or rooms):
	// they run alone, after the serial ones, so that no other case is
	// starved of a room by them.
	PhasePool
	// PhaseDestructive cases may crash or hang the target (malformed
	// corpus); they run alone, last. Once one of them reports the target
	// down (T.TargetDown), or the check after it finds it down, every
	// later case is not run.
	PhaseDestructive
	// PhaseReview cases send nothing: they judge what the other cases
	// received (every datagram a lobby sent them, say), so they run after
	// all of them, one at a time, even once the target is down.
	PhaseReview
)

// Case is one numbered conformance check, h2spec style: the id is the spec
// section it checks, Requirement quotes the sentence.
type Case struct {
	// ID is "<group>/<section>/<n>", e.g. "udp-lobby/5/2" (udp-lobby.md §5,
	// second case). The group is the protocol's name, or "inst" for the UDP
	// lobby's game-instance handshake. It must be unique across all
	// protocols.
	ID string
	// Protocol is the --protocol the case belongs to ("udp-lobby",
	// "tcp-lobby", "leviathan"): its group's name.
	Protocol string
	// Section cites the section of the protocol document (docs/protocols)
	// the case checks, as "<file>.md §<n> <title>", e.g. "udp-lobby.md §5
	// LOBBY_ROOM_LIST" (result.ParseDocRef reads it); cases are grouped by
	// it in the output. The section must list the case with its level: the
	// test in internal/protodocs fails otherwise.
	Section string
	// Desc is a one-line description of what is checked.
	Desc string
	// Requirement quotes the sentence of the document the case checks.
	Requirement string
	// Rule is the rule id when there is one (e.g. "U-CRC"), or several
	// separated by ", "; each must appear in the protocol's document.
	Rule  string
	Level Level
	Phase Phase
	// Owns names the replies whose form and presence this case judges, as
	// the protocol's reply-checking helper names them (e.g. "CREATE_ROOM_ACK"),
	// or a behaviour several setups rest on (e.g. "a created room in
	// LOBBY_ROOM_LIST").
	// A fixture or setup that cannot go on because such a reply broke a rule
	// or never came skips its dependants with this case's id (ownerOf): each
	// message has exactly one owner per protocol.
	Owns []string
	// Run performs the check. It returns nil when the requirement holds, a
	// *VerifyError (Fail, Failf) when it does not, a *SkipError (T.Skip)
	// when a precondition is not met. Any other error is a harness error
	// and the case is skipped with it, never failed.
	Run func(t *T) error
}

// Group is one protocol's group of the suite: the conformance half of its
// descriptor (package protocols), which registers it (RegisterGroup).
type Group struct {
	// Name is the --protocol value and the group of its case ids, e.g.
	// "udp-lobby" (the descriptor's name).
	Name string
	// Order places it among the groups (documentation order, lowest
	// first): the first is --protocol's default.
	Order int
	// Transport is "udp" or "tcp": how the target address is resolved.
	Transport string
	// Reach checks the target answers at all (and, for the UDP lobby,
	// settles the header profile in Env.Options). It returns a note for
	// the report (e.g. "header spec, guessed from the first reply") or an
	// error wrapping ErrUnreachable.
	Reach func(ctx context.Context, env *Env) (note string, err error)
	// Flags declares conform's flags of the protocol on fs (udp-lobby's
	// --header and --instance-ports); the function returned, called
	// after parsing, makes Config.Options of their values, or returns an
	// error naming the flag. Nil: no flags.
	Flags func(fs *flag.FlagSet) func() (any, error)
	// Options makes a run's own copy of Config.Options (nil: the
	// protocol's defaults) for Env.Options, which its reachability check
	// may settle and its cases read. Nil: Env.Options is Config.Options.
	Options func(any) any
	// Groups are further case id groups of the protocol's cases, listed
	// after its own in this order (udp-lobby's "inst": its game-instance
	// handshake).
	Groups []string
	// OldGroups maps the groups of older builds' case ids to today's
	// ("udp" → "udp-lobby"): CaseID reads them.
	OldGroups map[string]string
	// Cases are its cases; each one's Protocol is Name (set when empty).
	Cases []*Case
	// Plausible reports whether b could be the protocol's datagram, if a
	// faulty one (a UDP lobby's length field that fits, a Leviathan packet
	// that decodes). A datagram from the target's host but a port the case
	// did not wait on that is not plausible is stray: other programs on
	// the machine send to ports they once used, so it is logged and
	// ignored (UDPSocket.RecvFrom) rather than judged as the target's
	// reply. Nil: every datagram is plausible.
	Plausible func(b []byte) bool
	// FaultsIn is the folder, relative to the module's root, whose tests
	// prove the group's cases (each caught by a fault row, FaultCoverage)
	// when its fault servers live with the protocol rather than in this
	// package's tests ("protocols/toyecho"). Empty: this package's fault
	// tables prove them, and a group with none there fails its coverage.
	FaultsIn string
	// ScriptTransport opens a user case's transport (conform --cases
	// FILE, UserCases) on the case's own paced, logged sockets. Nil: the
	// protocol runs no user cases, and NoScripts says why.
	ScriptTransport func(t *T) (ScriptConn, error)
	NoScripts       string
	// CaseFile settles a user's case file with the run's flags: given the
	// options Flags made (Config.Options), it returns the run's options,
	// a setting of the file's own keys (cf.KeyLines) taking the place of
	// its flag when the flag was not given, and an error naming both when
	// they disagree (CaseFileOptions). Nil: the file's keys reach only
	// its scripts.
	CaseFile func(opts any, cf *scenario.CaseFile) (any, error)
	// ScriptOptions makes the options a user case's script sessions are
	// made of from the file's (CaseFile.Options) and the run's settled
	// ones (Env.Options). Nil: the file's.
	ScriptOptions func(env *Env, file scenario.Options) scenario.Options
}

// AddProtocolFlags declares every registered protocol's conform flags on
// fs (Group.Flags). The function returned, called after parsing, makes
// the Config.Options of protocol; every protocol's flags are checked, so
// that a bad value is an error whichever protocol runs.
func AddProtocolFlags(fs *flag.FlagSet) func(protocol string) (any, error) {
	type built struct {
		name  string
		build func() (any, error)
	}
	var all []built
	for _, name := range Protocols() {
		if p, _ := lookupGroup(name); p.Flags != nil {
			all = append(all, built{name, p.Flags(fs)})
		}
	}
	return func(protocol string) (any, error) {
		var opts any
		for _, b := range all {
			o, err := b.build()
			if err != nil {
				return nil, err
			}
			if b.name == protocol {
				opts = o
			}
		}
		return opts, nil
	}
}

var (
	regMu    sync.Mutex
	registry = map[string]*Case{}
	// owners maps protocol → message name → the id of the case owning it
	// (Case.Owns).
	owners = map[string]map[string]string{}
	groups = map[string]*Group{}

	// idMu guards rank and oldGroups, which Match reads while Cases holds
	// regMu.
	idMu sync.RWMutex
	// rank orders case id groups for listing (caseLess): a protocol's own
	// group, then its Groups, protocols in Order.
	rank = map[string][2]int{}
	// oldGroups maps old case id groups to today's (Group.OldGroups).
	oldGroups = map[string]string{}
)

// RegisterGroup adds a protocol's group and its cases to the suite. The
// protocol's descriptor calls it (protocols.Register). It panics on a
// duplicate name or case id, a malformed id, an id outside the group's
// groups or a case without Run: programming errors caught by the tests.
func RegisterGroup(g Group) {
	regMu.Lock()
	if _, dup := groups[g.Name]; dup || g.Name == "" {
		regMu.Unlock()
		panic("conformance: group " + strconv.Quote(g.Name) + " registered twice or unnamed")
	}
	groups[g.Name] = &g
	regMu.Unlock()
	idMu.Lock()
	for i, name := range append([]string{g.Name}, g.Groups...) {
		rank[name] = [2]int{g.Order, i}
	}
	for old, now := range g.OldGroups {
		oldGroups[old] = now
	}
	idMu.Unlock()
	for _, c := range g.Cases {
		if c.Protocol == "" {
			c.Protocol = g.Name
		}
		register(c)
	}
}

// register adds c to the suite: its protocol's group must be registered,
// and its id in one of the group's groups.
func register(c *Case) {
	regMu.Lock()
	defer regMu.Unlock()
	if c.Run == nil || c.Protocol == "" || c.Level == 0 {
		panic("conformance: case " + c.ID + " lacks Run, Protocol or Level")
	}
	if parts := strings.Split(c.ID, "/"); len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		panic("conformance: case id " + strconv.Quote(c.ID) + " is not group/section/n")
	}
	g := groups[c.Protocol]
	if id, _, _ := strings.Cut(c.ID, "/"); g == nil || (id != g.Name && !slices.Contains(g.Groups, id)) {
		panic("conformance: case id " + c.ID + ": the group is not one of its protocol's (" + c.Protocol + ")")
	}
	if _, dup := registry[c.ID]; dup {
		panic("conformance: duplicate case id " + c.ID)
	}
	for _, m := range c.Owns {
		if owners[c.Protocol] == nil {
			owners[c.Protocol] = map[string]string{}
		}
		if prev, dup := owners[c.Protocol][m]; dup {
			panic("conformance: " + m + " is owned by both " + prev + " and " + c.ID)
		}
		owners[c.Protocol][m] = c.ID
	}
	registry[c.ID] = c
}

// ownerOf returns the id of the case of protocol that owns the reply named
// msg (Case.Owns), "" when none does.
func ownerOf(protocol, msg string) string {
	regMu.Lock()
	defer regMu.Unlock()
	return owners[protocol][msg]
}

// Owned marks err, a finding about the reply named msg, as judged by the
// case of protocol that owns msg, so that a setup turning it into a skip
// (Precondition, SkipFor) names that case. A *VerifyError or *SkipError
// gets the Owner field; any other error is wrapped (errors.Is still sees
// through). A nil err, and replies no case owns, are returned unchanged.
func Owned(protocol, msg string, err error) error {
	id := ownerOf(protocol, msg)
	if id == "" || err == nil || ownerIn(err) != "" {
		return err
	}
	var v *VerifyError
	if errors.As(err, &v) {
		v.Owner = id
		return err
	}
	var s *SkipError
	if errors.As(err, &s) {
		s.Owner = id
		return err
	}
	return &ownedError{owner: id, err: err}
}

// ownedError is an error Owned marked that is neither a finding nor a skip
// (a silence, a refusal met during a setup).
type ownedError struct {
	owner string
	err   error
}

func (e *ownedError) Error() string { return e.err.Error() }
func (e *ownedError) Unwrap() error { return e.err }

// ownerIn returns the id of the case Owned marked err with, "" if none.
func ownerIn(err error) string {
	var v *VerifyError
	if errors.As(err, &v) && v.Owner != "" {
		return v.Owner
	}
	var s *SkipError
	if errors.As(err, &s) && s.Owner != "" {
		return s.Owner
	}
	var o *ownedError
	if errors.As(err, &o) {
		return o.owner
	}
	return ""
}

// Protocols returns the registered groups' names, sorted.
func Protocols() []string {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupGroup returns the registered group named name.
func LookupGroup(name string) (Group, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	g, ok := groups[name]
	if !ok {
		return Group{}, false
	}
	return *g, true
}

// DefaultProtocol is --protocol's default: the first group in Order.
func DefaultProtocol() string {
	regMu.Lock()
	defer regMu.Unlock()
	best := ""
	for n, g := range groups {
		if b := groups[best]; best == "" || g.Order < b.Order || g.Order == b.Order && n < best {
			best = n
		}
	}
	return best
}

func lookupGroup(name string) (*Group, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	g, ok := groups[name]
	return g, ok
}

// Cases returns the cases of protocol ("" for all) selected by patterns
// (see Match; none selects all), in id order.
func Cases(protocol string, patterns ...string) []*Case {
	regMu.Lock()
	var out []*Case
	for _, c := range registry {
		if protocol != "" && c.Protocol != protocol {
			continue
		}
		if len(patterns) > 0 && !matchAny(patterns, c.ID) {
			continue
		}
		out = append(out, c)
	}
	regMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return caseLess(out[i].ID, out[j].ID) })
	return out
}

// CaseID returns a case id, or a --cases pattern, of an older build under
// today's name: "udp/13/2" is "udp-lobby/13/2", "tcp/5.1" is
// "tcp-lobby/5.1", "udp" is "udp-lobby". Anything else is returned
// unchanged. Match reads patterns through it and UpgradeIDs stored results,
// so an old id, group or glob selects and pairs the same cases as the new.
func CaseID(id string) string {
	g, rest, more := strings.Cut(id, "/")
	idMu.RLock()
	n, ok := oldGroups[g]
	idMu.RUnlock()
	switch {
	case !ok:
		return id
	case more:
		return n + "/" + rest
	}
	return n
}

// UpgradeIDs renames the case ids of a stored conform result written by an
// older build (CaseID), so that it pairs with today's results (report
// compare, the matrix) and shows today's names.
func UpgradeIDs(c *result.Conform) {
	for i := range c.Cases {
		c.Cases[i].ID = CaseID(c.Cases[i].ID)
	}
}

// caseLess orders ids for listing and reports: by group (a protocol's own
// group before its further ones, protocols in Order), then CompareIDs.
func caseLess(a, b string) bool {
	if ra, rb := groupRank(a), groupRank(b); ra != rb {
		return ra[0] < rb[0] || ra[0] == rb[0] && ra[1] < rb[1]
	}
	return CompareIDs(a, b) < 0
}

func groupRank(id string) [2]int {
	g, _, _ := strings.Cut(id, "/")
	idMu.RLock()
	defer idMu.RUnlock()
	if r, ok := rank[g]; ok {
		return r
	}
	return [2]int{1 << 30, 0}
}

func matchAny(patterns []string, id string) bool {
	for _, p := range patterns {
		if Match(p, id) {
			return true
		}
	}
	return false
}

// Match reports whether case id is selected by pattern. A pattern without
// glob characters selects by whole segments: "udp-lobby/13" selects
// udp-lobby/13/1 and udp-lobby/13/10 but not udp-lobby/1/3; "udp-lobby"
// selects every udp-lobby case. A pattern with glob characters (path.Match
// syntax, '*' stays within a segment) is matched against the id cut to the
// pattern's number of segments, so "udp-lobby/1*" selects udp-lobby/1/2 and
// udp-lobby/13/4, and "*/5/*" every case of a section 5. A pattern in an old
// group ("udp/13", "tcp/R/*") is read as today's (CaseID).
func Match(pattern, id string) bool {
	pattern = CaseID(strings.Trim(strings.TrimSpace(pattern), "/"))
	if pattern == "" {
		return false
	}
	pseg := strings.Split(pattern, "/")
	iseg := strings.Split(id, "/")
	if len(pseg) > len(iseg) {
		return false
	}
	if strings.ContainsAny(pattern, "*?[\\") {
		ok, err := path.Match(pattern, strings.Join(iseg[:len(pseg)], "/"))
		return err == nil && ok
	}
	for i := range pseg {
		if pseg[i] != iseg[i] {
			return false
		}
	}
	return true
}

// ValidPattern reports a syntax error in a --cases pattern.
func ValidPattern(pattern string) error {
	if strings.Trim(strings.TrimSpace(pattern), "/") == "" {
		return fmt.Errorf("empty case pattern")
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("case pattern %q: %v", pattern, err)
	}
	return nil
}

// CompareIDs orders case ids segment by segment, numerically where both
// segments are numbers (dotted numbers like "5.1" compare part by part), so
// udp-lobby/5/2 < udp-lobby/5/10 < udp-lobby/13/1.
func CompareIDs(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareSeg(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

func compareSeg(a, b string) int {
	ap, bp := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(ap) && i < len(bp); i++ {
		an, aerr := strconv.Atoi(ap[i])
		bn, berr := strconv.Atoi(bp[i])
		switch {
		case aerr == nil && berr == nil:
			if an != bn {
				if an < bn {
					return -1
				}
				return 1
			}
		case aerr == nil: // numbers before names
			return -1
		case berr == nil:
			return 1
		default:
			if c := strings.Compare(ap[i], bp[i]); c != 0 {
				return c
			}
		}
	}
	return len(ap) - len(bp)
}
