package simclient

import "testing"

// BenchmarkBaseRenew is a closed-model client's bookkeeping between two
// sessions on one socket: Renew (the spent session closed and out of its
// group, the next one's group of one, recorder, generator) and the end of
// the next session's flow (leaveGroup, as Play does).
func BenchmarkBaseRenew(b *testing.B) {
	sh, _ := baseShared(b, "  - name: f\n    steps: [list_rooms]\n")
	var s Base
	if err := s.Begin(sh, 0, &sh.Plan.Flows[0]); err != nil {
		b.Fatal(err)
	}
	s.Join()
	b.ReportAllocs()
	id := 0
	for b.Loop() {
		id++
		s = s.Renew(id, 0)
		s.leaveGroup()
	}
}
