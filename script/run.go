package script

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
)

// Vars are a client's variables: the builtins, which the client sets,
// and the captures, kept across the blocks of its flow. A table, not a
// map: every client keeps one, and a Go map's smallest is about 340 bytes
// where five variables take 160; a flow has a handful.
type Vars []Var

// Var is one variable and its value. Read it with Vars.Get: the session
// numbers may be held unboxed (WithBuiltins).
type Var struct {
	Name  string
	Value any
}

// WithBuiltins is v emptied, with the builtins (Builtins, in their order)
// set to these values: a client's variables before its first capture.
// Each is a number in the variable's own cell (unboxed), boxed when
// something reads it (Get, an expression): a renewed client's table keeps
// its cells, so a renewal allocates nothing, though its session number is
// new each time and its group number often is (boxing a number of 256 or
// more allocates), and few flows read them.
func (v Vars) WithBuiltins(session, client, group, shard uint64) Vars {
	out := v[:0] // variable i is read before out's i overwrites it
	for i, n := range [...]uint64{session, client, group, shard} {
		cell, ok := unboxed(nil), false
		if i < len(v) {
			cell, ok = v[i].Value.(unboxed)
		}
		if !ok {
			cell = new(uint64) // once a client, or once after a flow read it
		}
		*cell = n
		out = append(out, Var{Builtins[i], cell})
	}
	return out
}

// unboxed is a number variable's value not boxed yet: a pointer in an
// interface allocates nothing (WithBuiltins).
type unboxed *uint64

// at is variable i's value, boxing an unboxed number the first time, in
// v's array: later reads find it boxed.
func (v Vars) at(i int) any {
	if n, ok := v[i].Value.(unboxed); ok {
		v[i].Value = *n
	}
	return v[i].Value
}

// Get returns variable name's value (nil, false when it is not set).
func (v Vars) Get(name string) (any, bool) {
	for i := range v {
		if v[i].Name == name {
			return v.at(i), true
		}
	}
	return nil, false
}

// Set sets variable name to value, adding it when it is new.
func (v *Vars) Set(name string, value any) {
	for i := range *v {
		if (*v)[i].Name == name {
			(*v)[i].Value = value
			return
		}
	}
	*v = append(*v, Var{name, value})
}

// Transport carries a client's units (datagrams, frames' payloads,
// messages) on its channels.
type Transport interface {
	// Send sends b on channel ("" for a protocol's one) and says when.
	Send(channel string, b []byte) (sent time.Time, err error)
	// Recv returns the next unit received on any channel, and when; past
	// deadline an error that errors.Is os.ErrDeadlineExceeded. It may
	// instead return ErrSuspended when nothing is there yet and its
	// client gives up its goroutine for the wait: Run then returns
	// ErrSuspended, keeping its place, and the caller's next Run of the
	// same block goes on with the same wait, its deadline unchanged.
	Recv(deadline time.Time) (channel string, b []byte, at time.Time, err error)
}

// ErrSuspended is what a Transport's Recv, or an Env's Call, returns to
// give up the goroutine in a wait, and what Run then returns, unwrapped:
// the block is not over. Run, called again with the same block and Env,
// goes on where it stopped (in its ifs, repeats and retries), with the
// same wait: an expect's or silence's deadline kept, a Call's wait over.
var ErrSuspended = errors.New("script: suspended in a wait")

// Router is a Transport that opens the channel a reply routes the client
// to (Decoded.Route).
type Router interface {
	Route(r Route) error
}

// Follower is a Transport whose client keeps state of its own for the
// built-in steps of its flow (a room created, an instance joined, a game
// started): it is told of each message a script received, decoded and
// not stale, after its Route, so that the built-in steps after the
// script go on from where the script left the client.
type Follower interface {
	Follow(channel string, d Decoded)
}

// Key names a measured request: the send step's label and its message.
type Key struct{ Label, Message string }

// Request is one measured send/expect pair.
type Request struct {
	Key                      Key
	Intended, Sent, Received time.Time
}

// Recorder is what a client records of a script.
type Recorder interface {
	// Request is a send answered by the expect after it.
	Request(r Request)
	// Violation is a rule a received message broke; key is the request
	// it answered (Message: the received one when none).
	Violation(key Key, v Violation)
	// Fail is a step that failed and said on_fail: continue.
	Fail(label string, err error)
}

// Env is what Run plays a block with.
type Env struct {
	Catalog   Catalog
	Session   any // the catalog's session (Catalog.NewSession)
	Transport Transport
	Vars      Vars
	// Intended returns the intended time of a send (the schedule's);
	// nil: the send's start.
	Intended func() time.Time
	// Call plays a step the script does not (Step.Call).
	Call   func(ctx context.Context, v any) error
	Record Recorder
	// Rand is the client's random source (the built-in steps' own):
	// random() in an expression and a malformed send's kind draw from it.
	// nil: a source seeded 1, 1.
	Rand *rand.Rand

	// random is random() as expressions call it, made once.
	random func() float64
	// malformed is the kind of the last send, when it was broken on
	// purpose; "" otherwise. malformedKey is the last malformed send's,
	// which a reply to a malformed send is recorded under.
	malformed    string
	malformedKey Key
	// allow are the rules the last send's replies may break on purpose
	// (Send.Allow), not recorded.
	allow []string

	// ended is when the message the last step played received came, when
	// that step was an expect (Ended); zero after any other step.
	ended time.Time

	// pending is the last send, until an expect answers it (pendingSet):
	// a value, not a pointer, so that a send allocates none.
	pending    Request
	pendingSet bool

	// resume is where a suspended Run goes on: the step index, try,
	// round or branch of each level it was in, innermost first (pushed
	// as ErrSuspended went up), popped from the end as Run goes down
	// again. Its array is kept from one suspension to the next.
	resume []int
	// leaf is the suspended wait, once Run goes on: the expect's or
	// silence's deadline (zero for a Call's wait, which is over).
	leaf struct {
		until time.Time
		set   bool
	}
}

// Ended is when the message the last step Run played received came,
// when that step was an expect that held: the end of the block, which
// its caller need not read the clock for. Zero otherwise.
func (env *Env) Ended() time.Time { return env.ended }

// TakePending returns the send no expect has answered yet, if there is
// one, and forgets it: the caller records how it ended (the end of the
// run cut it, or its step failed).
func (env *Env) TakePending() (Request, bool) {
	q, ok := env.pending, env.pendingSet
	env.pendingSet = false
	return q, ok
}

// resumed pops the place of the level Run goes down to, when it goes on
// after a suspension (ok true), and 0 otherwise.
func (env *Env) resumed() (at int, ok bool) {
	n := len(env.resume)
	if n == 0 {
		return 0, false
	}
	at = env.resume[n-1]
	env.resume = env.resume[:n-1]
	return at, true
}

// suspended pushes a level's place at when err is ErrSuspended going up,
// and returns err.
func (env *Env) suspended(err error, at int) error {
	if err == ErrSuspended {
		env.resume = append(env.resume, at)
	}
	return err
}

// until is the deadline of a wait for d: the suspended one's when Run goes
// on with it, else d from now.
func (env *Env) until(d time.Duration) time.Time {
	if env.leaf.set {
		env.leaf.set = false
		return env.leaf.until
	}
	return time.Now().Add(d)
}

// resumedCall reports whether the Call Run goes down to is the one
// whose wait suspended it (then over).
func (env *Env) resumedCall() bool {
	ok := env.leaf.set
	env.leaf.set = false
	return ok
}

// suspend marks a leaf's wait until until suspended (ErrSuspended).
func (env *Env) suspend(until time.Time) error {
	env.leaf.until, env.leaf.set = until, true
	return ErrSuspended
}

// mapPool holds the maps a send's fields, an expect's variables and a
// received message's fields are made in for as long as a step reads
// them: a map per request allocated a request apart, and one kept per
// client between steps cost a parked client hundreds of bytes.
var mapPool = sync.Pool{New: func() any { return make(map[string]any, 8) }}

func getMap() map[string]any { return mapPool.Get().(map[string]any) }

func putMap(m map[string]any) {
	clear(m)
	mapPool.Put(m)
}

// FieldsMap is an empty map for a Decoded's Fields, from the pool Run
// puts every Decoded's Fields back into once it has read the message
// (Catalog.Decode): a catalog that takes its maps here makes a reply
// cost none.
func FieldsMap() map[string]any { return getMap() }

// recycle puts d's fields back into the pool (FieldsMap).
func (env *Env) recycle(d Decoded) {
	if d.Fields != nil {
		putMap(d.Fields)
	}
}

// Failure is a step that failed: what it wanted and what came instead.
type Failure struct {
	Line  int
	Label string
	Msg   string
	// Silent says nothing came where a message was expected (a timeout,
	// not a wrong reply).
	Silent bool
	// Err is the transport's error that ended the step (a send that
	// failed, a connection closed), nil for a wrong or missing reply.
	Err error
}

// Unwrap is the transport's error, if one ended the step.
func (f *Failure) Unwrap() error { return f.Err }

func (f *Failure) Error() string { return fmt.Sprintf("%s (line %d): %s", f.Label, f.Line, f.Msg) }

// Run plays b. It returns the first failure of a step whose on_fail is
// abort (or retry, out of retries), or ctx's error, or ErrSuspended (a
// wait gave up the goroutine: Run with the same b and env goes on).
func Run(ctx context.Context, b *Block, env *Env) error {
	i, resumed := env.resumed()
	for ; i < len(b.Steps); i++ {
		// A suspended wait goes on even when ctx ended: the step it
		// is in ends as its transport says (cancelled), and Run's
		// place is all taken back.
		if err := ctx.Err(); err != nil && !resumed {
			return err
		}
		resumed = false
		if err := runStep(ctx, &b.Steps[i], env); err != nil {
			return env.suspended(err, i)
		}
	}
	return nil
}

// runStep plays st as its on_fail says.
func runStep(ctx context.Context, st *Step, env *Env) error {
	try, _ := env.resumed()
	env.ended = time.Time{}
	for ; ; try++ {
		err := playStep(ctx, st, env)
		if err == nil || !isFailure(err) {
			return env.suspended(err, try)
		}
		switch {
		case st.OnFail == Continue:
			env.Record.Fail(st.Label, err)
			return nil
		case st.OnFail == Retry && try < st.Retries:
			continue
		}
		return err
	}
}

// isFailure reports whether err is a step's Failure (apart from runStep,
// so that the variable errors.As fills escapes only when a step failed).
func isFailure(err error) bool {
	var f *Failure
	return errors.As(err, &f)
}

func playStep(ctx context.Context, st *Step, env *Env) error {
	switch {
	case st.Send != nil:
		return env.send(st, st.Send)
	case st.Expect != nil && st.Expect.Silence > 0:
		return env.silence(st, st.Expect)
	case st.Expect != nil:
		return env.expect(st, st.Expect)
	case st.If != nil:
		return env.ifStep(ctx, st)
	case st.Repeat != nil:
		return env.repeat(ctx, st, st.Repeat)
	case st.Call != nil && env.resumedCall():
		return nil
	case st.Call != nil:
		err := env.Call(ctx, st.Call.Value)
		if err == ErrSuspended {
			return env.suspend(time.Time{})
		}
		return err
	}
	return nil
}

func fail(st *Step, format string, a ...any) error {
	return &Failure{Line: st.Line, Label: st.Label, Msg: fmt.Sprintf(format, a...)}
}

// failErr is fail for a step the transport's error ended.
func failErr(st *Step, err error, format string, a ...any) error {
	return &Failure{Line: st.Line, Label: st.Label, Msg: fmt.Sprintf(format, a...), Err: err}
}

func (env *Env) send(st *Step, s *Send) error {
	var intended time.Time
	if env.Intended != nil {
		intended = env.Intended()
	} else {
		intended = time.Now()
	}
	env.malformed, env.allow = "", s.allow
	b, name := s.raw, "raw"
	if s.msg != nil {
		name = s.msg.Name
		var err error
		if b, err = env.make(s, intended); err != nil {
			return fail(st, "%v", err)
		}
	}
	sent, err := env.Transport.Send(s.channel, b)
	if err != nil {
		return failErr(st, err, "send %s: %v", name, err)
	}
	if env.malformed != "" {
		// Broken on purpose: no reply is wanted, so it is no request.
		env.pendingSet = false
		env.malformedKey = Key{Label: st.Label, Message: name}
		if mr, ok := env.Record.(MalformedRecorder); ok {
			mr.MalformedSent(env.malformed)
		}
		return nil
	}
	env.pending, env.pendingSet = Request{Key: Key{Label: st.Label, Message: name}, Intended: intended, Sent: sent}, true
	return nil
}

// make encodes send s's message, its fields resolved from the variables,
// the session told of its intended time (Scheduled).
func (env *Env) make(s *Send, intended time.Time) ([]byte, error) {
	name := s.msg.Name
	var fields map[string]any // nil: none given
	if len(s.Fields) > 0 {
		fields = getMap() // Catalog.Encode does not keep it
		defer putMap(fields)
	}
	for i := range s.Fields {
		v, err := s.Fields[i].resolve(env.Vars)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %v", name, s.Fields[i].Name.S, err)
		}
		fields[s.Fields[i].Name.S] = v
	}
	if sc, ok := env.Session.(Scheduled); ok {
		sc.Intend(intended)
	}
	b, err := env.encode(s, name, fields)
	if err != nil {
		return nil, fmt.Errorf("cannot make %s: %v", name, err)
	}
	return b, nil
}

// encode makes send s's message of fields, broken by a kind drawn from
// its malformed ones when it has them (env.malformed names it).
func (env *Env) encode(s *Send, name string, fields map[string]any) ([]byte, error) {
	if len(s.Malformed) == 0 {
		return env.Catalog.Encode(env.Session, name, fields)
	}
	rng := env.rng()
	kind := s.Malformed[rng.IntN(len(s.Malformed))].S // drawn as the built-in malformed step draws
	b, err := env.Catalog.(Breaker).Break(env.Session, name, fields, kind, rng)
	if err == nil {
		env.malformed = kind
	}
	return b, err
}

// rng is the client's random source (a fixed one when it has none).
func (env *Env) rng() *rand.Rand {
	if env.Rand == nil {
		env.Rand = rand.New(rand.NewPCG(1, 1))
	}
	return env.Rand
}

// recv is the next unit, decoded, its violations recorded; ok false at
// the deadline.
func (env *Env) recv(deadline time.Time) (d Decoded, b []byte, at time.Time, ok bool, err error) {
	for {
		ch, b, at, err := env.Transport.Recv(deadline)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return d, nil, at, false, nil
		}
		if err == ErrSuspended {
			return d, nil, at, false, env.suspend(deadline)
		}
		if err != nil {
			return d, nil, at, false, err
		}
		d = env.Catalog.Decode(env.Session, ch, b)
		key := Key{Label: "expect", Message: d.Name}
		switch {
		case d.Malformed != "":
			key = env.malformedKey
		case env.pendingSet:
			key = env.pending.Key
		}
		for _, v := range d.Violations {
			if !slices.Contains(env.allow, v.Rule) {
				v.Packet = b
				env.Record.Violation(key, v)
			}
		}
		if mr, ok := env.Record.(MalformedRecorder); ok && d.Malformed != "" {
			mr.MalformedReply(d.Malformed)
		}
		if d.Stale {
			env.recycle(d)
			continue // an earlier request's answer: not the one awaited
		}
		if r, isRouter := env.Transport.(Router); isRouter && d.Route != nil {
			err = r.Route(*d.Route)
		}
		if f, follows := env.Transport.(Follower); follows && d.Name != "" {
			f.Follow(ch, d)
		}
		return d, b, at, true, err
	}
}

func (env *Env) expect(st *Step, e *Expect) error {
	d, b, at, ok, err := env.recv(env.until(e.Within))
	switch {
	case err == ErrSuspended:
		return err
	case err != nil:
		return failErr(st, err, "expected %s: %v", wanted(e), err)
	case !ok:
		f := fail(st, "expected %s within %s: nothing came", wanted(e), e.Within).(*Failure)
		f.Silent = true
		return f
	case !e.Any && !named(e.Messages, d.Name):
		return fail(st, "expected %s, got %s", wanted(e), came(d, b))
	}
	defer env.recycle(d)
	var vars map[string]any
	if e.Where.prog != nil || len(e.Capture) > 0 {
		vars = env.exprEnv(d)
		defer putMap(vars)
	}
	if err := where(e, vars); err != nil {
		return fail(st, "%s: %v: got %s", d.Name, err, came(d, b))
	}
	for _, c := range e.Capture {
		env.Vars.Set(c.Var.S, vars[c.Field.S])
	}
	if env.pendingSet {
		env.pendingSet = false
		env.pending.Received = at
		env.Record.Request(env.pending)
	}
	env.ended = at
	return nil
}

// where is nil when e has no where or it holds for vars (exprEnv's).
func where(e *Expect, vars map[string]any) error {
	if e.Where.prog == nil {
		return nil
	}
	held, err := expr.Run(e.Where.prog, vars)
	switch {
	case err != nil:
		return fmt.Errorf("where %q could not be evaluated (%v)", e.Where.S, err)
	case held != true:
		return fmt.Errorf("where %q does not hold", e.Where.S)
	}
	return nil
}

func (env *Env) silence(st *Step, e *Expect) error {
	d, b, _, ok, err := env.recv(env.until(e.Silence))
	switch {
	case err == ErrSuspended:
		return err
	case err != nil:
		return failErr(st, err, "expected silence for %s: %v", e.Silence, err)
	case ok:
		return fail(st, "expected silence for %s, got %s", e.Silence, came(d, b))
	}
	// A send the silence followed wanted no reply: it is not a request
	// left unanswered.
	env.TakePending()
	return nil
}

// exprEnv is an expression's variables for received message d.
// The map is mapPool's (putMap it): a capture copies its value out.
func (env *Env) exprEnv(d Decoded) map[string]any {
	m := env.varsMap()
	for k, v := range d.Fields {
		m[k] = v
	}
	m[MessageVar] = d.Name
	return m
}

// varsMap is the variables as an expression reads them, in mapPool's
// map (putMap it).
func (env *Env) varsMap() map[string]any {
	m := getMap()
	for i := range env.Vars {
		m[env.Vars[i].Name] = env.Vars.at(i)
	}
	if env.random == nil {
		env.random = func() float64 { return env.rng().Float64() }
	}
	m[RandomFunc] = env.random
	return m
}

func (env *Env) cond(st *Step, x *Expr) (bool, error) {
	vars := env.varsMap()
	v, err := expr.Run(x.prog, vars)
	putMap(vars)
	if err != nil {
		return false, fail(st, "expression %q: %v", x.S, err)
	}
	return v == true, nil
}

// ifStep plays Then or Else; going on after a suspension, the branch it
// was in (1: Then), its condition not evaluated again.
func (env *Env) ifStep(ctx context.Context, st *Step) error {
	then, resumed := env.resumed()
	if !resumed {
		ok, err := env.cond(st, &st.If.Cond)
		if err != nil {
			return err
		}
		then = 0
		if ok {
			then = 1
		}
	}
	blk := &st.If.Else
	if then == 1 {
		blk = &st.If.Then
	}
	return env.suspended(Run(ctx, blk, env), then)
}

func (env *Env) repeat(ctx context.Context, st *Step, r *Repeat) error {
	n := r.Count
	if r.While.Set() {
		n = r.Max
	}
	// Going on after a suspension: inside round i's body, its while
	// not evaluated again.
	i, resumed := env.resumed()
	for ; i <= n; i++ {
		if resumed {
			resumed = false
		} else if r.While.Set() {
			ok, err := env.cond(st, &r.While)
			if err != nil || !ok {
				return err
			}
		}
		if i == n {
			return failMax(st, r)
		}
		if err := Run(ctx, &r.Body, env); err != nil {
			return env.suspended(err, i)
		}
	}
	return nil
}

// failMax fails a while that still holds after its max rounds (a
// count's last round ends the loop).
func failMax(st *Step, r *Repeat) error {
	if !r.While.Set() {
		return nil
	}
	return fail(st, "while %q still holds after %d rounds (max)", r.While.S, r.Max)
}

func wanted(e *Expect) string {
	if e.Any {
		return "any message"
	}
	s := make([]string, len(e.Messages))
	for i, m := range e.Messages {
		s[i] = m.S
	}
	return strings.Join(s, " or ")
}

func named(ts []Src, name string) bool {
	for _, t := range ts {
		if t.S == name {
			return true
		}
	}
	return false
}

// came names a received unit for a failure: its type, or that it could
// not be read, and its bytes.
func came(d Decoded, b []byte) string {
	name := d.Name
	if name == "" {
		name = "an unreadable message"
	}
	const most = 64
	h := hex.EncodeToString(b[:min(len(b), most)])
	if len(b) > most {
		h += fmt.Sprintf("… (%d bytes)", len(b))
	}
	return fmt.Sprintf("%s (hex %s)", name, h)
}
