package result

import "testing"

func TestParseDocRef(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want DocRef
		ok   bool
	}{
		{"udp-lobby.md §5 LOBBY_ROOM_LIST", DocRef{"udp-lobby.md", "5", "LOBBY_ROOM_LIST"}, true},
		{"tcp-lobby.md §5.1 Room management", DocRef{"tcp-lobby.md", "5.1", "Room management"}, true},
		{"tcp-lobby.md §A Packet size summary", DocRef{"tcp-lobby.md", "A", "Packet size summary"}, true},
		{"udp-lobby.md §3.4", DocRef{"udp-lobby.md", "3.4", ""}, true},
		{"5", DocRef{}, false},
		{"", DocRef{}, false},
		{"Section 5 of the lobby page", DocRef{}, false},
		{"udp-lobby.md 5 LOBBY_ROOM_LIST", DocRef{}, false},
		{"udp-lobby.md §5. LOBBY_ROOM_LIST", DocRef{}, false},
		{"../udp-lobby.md §5 LOBBY_ROOM_LIST", DocRef{}, false},
	} {
		got, ok := ParseDocRef(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseDocRef(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	r := DocRef{"tcp-lobby.md", "5.1", "Room management"}
	for base, want := range map[string]string{
		"":                               "",
		"https://example.org/p":          "https://example.org/p/tcp-lobby.md#s5.1",
		"file:///src/lb/docs/protocols/": "file:///src/lb/docs/protocols/tcp-lobby.md#s5.1",
	} {
		if got := r.Link(base); got != want {
			t.Errorf("Link(%q) = %q, want %q", base, got, want)
		}
	}
	if got := r.Path(); got != "docs/protocols/tcp-lobby.md" {
		t.Errorf("Path() = %q", got)
	}
}
