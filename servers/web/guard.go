package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// ErrBlocked is wrapped by every refusal of the address guard.
var ErrBlocked = errors.New("blocked address")

// Guard decides which addresses requests may reach. By default only public
// unicast addresses are allowed; Allow opens host names, addresses and
// prefixes (for local services the user trusts, and for tests).
type Guard struct {
	names    map[string]bool
	prefixes []netip.Prefix
	// lookup resolves host names (net.DefaultResolver; tests replace it).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	dialer net.Dialer
}

// NewGuard parses an allowlist: host names ("searx.lan"), addresses
// ("127.0.0.1", "::1") and prefixes ("192.168.1.0/24").
func NewGuard(allow []string) (*Guard, error) {
	g := &Guard{names: map[string]bool{}}
	g.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	g.dialer = net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	for _, a := range allow {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if p, err := netip.ParsePrefix(a); err == nil {
			g.prefixes = append(g.prefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(a, "[]")); err == nil {
			g.prefixes = append(g.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(a, "."))
		if strings.ContainsAny(name, "/: ") {
			return nil, fmt.Errorf("allow %q: want a host name, an address or a prefix like 10.0.0.0/8", a)
		}
		g.names[name] = true
	}
	return g, nil
}

// special lists the non-public ranges that netip's predicates do not
// name: shared address space (carrier-grade NAT, where Alibaba's metadata
// service lives), IETF protocol assignments, documentation and benchmarking
// networks, the reserved class E, NAT64, 6to4, Teredo and the documentation
// and discard IPv6 ranges.
var special = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16", "fc00::/7",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// Public reports whether ip is a public unicast address, and if not, what
// kind it is.
func Public(ip netip.Addr) (bool, string) {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return false, "invalid"
	case ip.IsLoopback():
		return false, "loopback"
	case ip.IsUnspecified():
		return false, "unspecified"
	case ip == netip.AddrFrom4([4]byte{169, 254, 169, 254}), ip == netip.MustParseAddr("fd00:ec2::254"), ip == netip.AddrFrom4([4]byte{100, 100, 100, 200}):
		return false, "cloud metadata"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return false, "link-local"
	case ip.IsMulticast():
		return false, "multicast"
	case ip.IsPrivate():
		return false, "private"
	}
	for _, p := range special {
		if p.Contains(ip) {
			return false, "reserved"
		}
	}
	return true, ""
}

// allowed reports whether a request for host may connect to ip.
func (g *Guard) allowed(host string, ip netip.Addr) error {
	ip = ip.Unmap()
	if ok, kind := Public(ip); !ok {
		if g.names[strings.ToLower(strings.TrimSuffix(host, "."))] {
			return nil
		}
		for _, p := range g.prefixes {
			if p.Contains(ip) {
				return nil
			}
		}
		if host == ip.String() {
			return fmt.Errorf("%w: %s is a %s address; only public addresses may be fetched", ErrBlocked, ip, kind)
		}
		return fmt.Errorf("%w: %s resolves to %s, a %s address; only public addresses may be fetched", ErrBlocked, host, ip, kind)
	}
	return nil
}

// DialContext resolves addr's host, refuses addresses the guard does not
// allow and connects to the first allowed one. Because the address
// checked is the address dialled, a name that resolves differently the
// second time (DNS rebinding) cannot slip through.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		addrs, err := g.lookup(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("cannot resolve %s: %w", host, err)
		}
		ips = addrs
	}
	var refused, failed error
	for _, ip := range ips {
		if err := g.allowed(host, ip); err != nil {
			if refused == nil {
				refused = err
			}
			continue
		}
		c, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		failed = err
		if ctx.Err() != nil {
			break
		}
	}
	if failed != nil {
		return nil, failed
	}
	if refused != nil {
		return nil, refused
	}
	return nil, fmt.Errorf("%s has no address", host)
}

// CheckHost refuses a URL host that is literally a blocked address before
// any connection is tried, so the error names it plainly.
func (g *Guard) CheckHost(host string) error {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return g.allowed(ip.String(), ip)
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if (h == "localhost" || strings.HasSuffix(h, ".localhost")) && !g.names[h] {
		// Resolution would say the same; this says it without asking DNS.
		return fmt.Errorf("%w: %s is the loopback host; only public addresses may be fetched", ErrBlocked, host)
	}
	return nil
}
