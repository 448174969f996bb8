package simclient

// Preparer is a Session that can do its setup work before Run, so that
// work never sits between the schedule's intended time and the first
// send. The open model calls Prepare on each arrival's session when it
// makes it, PrepareLead (3 ms) before its due time, after the factory.
//
// A tcp-lobby session whose flow starts with connect dials its TCP
// connection there, in the background: the connect step then finds the
// connection open, as a connection kept from the previous flow is
// (Reusable), and only sends CONNECT_REQ. Prepare never fails: a dial
// that failed is reported by the step that needed the connection, with
// the reason it would have had there (a failed start for a local
// failure, conn_refused for a refusal). Sessions whose factory already
// binds the socket (udp-lobby, Leviathan) have nothing more to prepare.
type Preparer interface {
	Session
	Prepare()
}

// Prepare calls sess.Prepare when sess is a Preparer.
func Prepare(sess any) {
	if p, ok := sess.(Preparer); ok {
		p.Prepare()
	}
}
