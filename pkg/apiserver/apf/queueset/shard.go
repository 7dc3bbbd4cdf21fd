package queueset

import "hash/fnv"

// dealer deals a hand of distinct queues from a deck of them, the same
// hand for the same flow hash: shuffle sharding. A flow is confined to
// its hand, so a flood fills at most hand queues, and two flows share
// their whole hand only rarely.
type dealer struct {
	deck, hand int
}

func newDealer(deck, hand int) dealer {
	return dealer{deck: deck, hand: min(max(hand, 1), deck)}
}

// deal calls pick with each queue of the hand of hash h, in dealing
// order. The hash is read as digits of falling bases (deck, deck-1,
// ...): digit i picks among the queues not dealt yet.
func (d dealer) deal(h uint64, pick func(int)) {
	if d.deck == 0 {
		return
	}
	var buf [16]int
	dealt := buf[:0] // ascending
	for i := range d.hand {
		base := uint64(d.deck - i)
		card := int(h % base)
		h /= base
		// The card-th queue not dealt: step over those dealt before it.
		at := 0
		for at < len(dealt) && dealt[at] <= card {
			card++
			at++
		}
		dealt = append(dealt, 0)
		copy(dealt[at+1:], dealt[at:])
		dealt[at] = card
		pick(card)
	}
}

// FlowHash is the hash of a flow: its flow schema and distinguisher (as
// kube's, FNV-1a over both, each followed by a NUL).
func FlowHash(flowSchema, distinguisher string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(flowSchema))
	h.Write([]byte{0})
	h.Write([]byte(distinguisher))
	h.Write([]byte{0})
	return h.Sum64()
}
