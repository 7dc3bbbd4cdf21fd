package ipallocator

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/netip"
)

// ipRange is the arithmetic of one service CIDR, as kube's allocator of
// one range does it: the usable addresses (not the network address, nor
// the IPv4 broadcast) in a lower part, mostly left to clients that ask for
// a specific IP (the first min(max(16, size/16), 256) addresses), and an
// upper part, which dynamic allocation prefers.
type ipRange struct {
	cidr netip.Prefix
	// first and last usable addresses; offset starts the upper part.
	first, offset, last netip.Addr
	// lowerSize and upperSize count the addresses of each part.
	lowerSize, upperSize *big.Int
}

func newRange(cidr netip.Prefix) (*ipRange, error) {
	cidr = cidr.Masked()
	if cidr.Addr().Is6() && cidr.Bits() < 64 {
		return nil, fmt.Errorf("shortest allowed prefix length for service CIDR is 64, got %d", cidr.Bits())
	}
	size := new(big.Int).Lsh(big.NewInt(1), uint(cidr.Addr().BitLen()-cidr.Bits()))
	size.Sub(size, big.NewInt(1)) // not the network address
	last := lastAddr(cidr)
	if cidr.Addr().Is4() {
		size.Sub(size, big.NewInt(1)) // nor the broadcast address
		last = last.Prev()
	}
	if size.Sign() <= 0 {
		return nil, fmt.Errorf("service CIDR %s has no usable address", cidr)
	}
	rangeOffset := calculateRangeOffset(size)
	first := cidr.Addr().Next()
	return &ipRange{
		cidr: cidr, first: first, offset: addOffset(first, big.NewInt(rangeOffset)), last: last,
		lowerSize: big.NewInt(rangeOffset), upperSize: new(big.Int).Sub(size, big.NewInt(rangeOffset)),
	}, nil
}

// calculateRangeOffset is kube's size of the lower part of the range:
// min(max(16, size/16), 256), and none for ranges of 16 addresses or less.
func calculateRangeOffset(size *big.Int) int64 {
	if size.Cmp(big.NewInt(16)) <= 0 {
		return 0
	}
	offset := new(big.Int).Div(size, big.NewInt(16))
	switch {
	case offset.Cmp(big.NewInt(16)) < 0:
		return 16
	case offset.Cmp(big.NewInt(256)) > 0:
		return 256
	}
	return offset.Int64()
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func addOffset(a netip.Addr, off *big.Int) netip.Addr {
	n := new(big.Int).SetBytes(a.AsSlice())
	n.Add(n, off)
	b := n.FillBytes(make([]byte, len(a.AsSlice())))
	out, _ := netip.AddrFromSlice(b)
	return out
}

// contains reports whether ip is a usable address of the range.
func (r *ipRange) contains(ip netip.Addr) bool {
	return r.cidr.Contains(ip) && ip.Compare(r.first) >= 0 && ip.Compare(r.last) <= 0
}

// next reserves a free address of the range with reserve, the upper part
// first; taken are the addresses known to be reserved.
func (r *ipRange) next(ctx context.Context, taken map[netip.Addr]bool, reserve func(context.Context, netip.Addr) error) (netip.Addr, error) {
	for _, part := range []struct {
		start netip.Addr
		size  *big.Int
	}{{r.offset, r.upperSize}, {r.first, r.lowerSize}} {
		if part.size.Sign() == 0 {
			continue
		}
		ip, err := nextFrom(ctx, part.start, part.size, taken, reserve)
		if !errors.Is(err, ErrFull) {
			return ip, err
		}
	}
	return netip.Addr{}, ErrFull
}

// nextFrom walks the size addresses from start on, beginning at a random
// one, and reserves the first free address. The walk is bounded by the
// size of the part, which a full /12 or a large IPv6 range makes long: for
// those it tries a bounded number of addresses instead.
func nextFrom(ctx context.Context, start netip.Addr, size *big.Int, taken map[netip.Addr]bool,
	reserve func(context.Context, netip.Addr) error) (netip.Addr, error) {
	const maxWalk = 1 << 16
	n := size.Int64()
	if !size.IsInt64() || n > maxWalk {
		n = maxWalk
	}
	first := randBig(size)
	for i := int64(0); i < n; i++ {
		off := new(big.Int).Add(first, big.NewInt(i))
		off.Mod(off, size)
		ip := addOffset(start, off)
		if taken[ip] {
			continue
		}
		err := reserve(ctx, ip)
		if errors.Is(err, ErrAllocated) {
			continue // another request took it since we listed
		}
		return ip, err
	}
	return netip.Addr{}, ErrFull
}

func randBig(limit *big.Int) *big.Int {
	if limit.IsInt64() {
		return big.NewInt(rand.Int64N(limit.Int64()))
	}
	n := new(big.Int).SetUint64(rand.Uint64())
	return n.Mod(n, limit)
}
