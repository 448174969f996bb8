package levconn

import "github.com/lobbybench/lobbybench/internal/impair"

// Impair is simulated network impairment of one direction of a Driver's
// datagrams: probabilities in [0,1], every datagram delayed by Delay ± a
// uniform Jitter. The zero value changes nothing. It is impair.Config, the
// implementation the UDP lobby client shares.
type Impair = impair.Config

// ImpairStats counts what one direction's impairment did.
type ImpairStats = impair.Stats

// maxHeld bounds each direction's queue of held datagrams; beyond it
// datagrams are dropped, as a full router queue would.
const maxHeld = 256
