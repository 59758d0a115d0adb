package web

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// ParseTrustedProxies reads --trusted-proxies: comma-separated CIDRs (10.0.0.0/8, fd00::/8)
// or single addresses.
func ParseTrustedProxies(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, x := range strings.Split(s, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			continue
		}
		if !strings.Contains(x, "/") {
			ip := net.ParseIP(x)
			if ip == nil {
				return nil, fmt.Errorf("%q is neither a CIDR (like 10.0.0.0/8) nor an IP address", x)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(x)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR (like 10.0.0.0/8 or fd00::/8)", x)
		}
		out = append(out, n)
	}
	return out, nil
}

// ipExtractor is how c.RealIP() finds the client's address: the peer's address, unless the
// peer is one of the trusted proxies, in which case X-Forwarded-For is read from the right,
// skipping trusted proxies, up to the first address that is not one. Echo's own defaults
// trust loopback, link-local and private peers; here only the configured ranges are trusted.
func ipExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// fromTrustedProxy says whether the request's peer is a configured proxy.
func (h *signIn) fromTrustedProxy(r *http.Request) bool {
	if len(h.config.TrustedProxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	for _, n := range h.config.TrustedProxies {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// isHTTPS says whether the browser reached Arbiter over TLS: directly, or through a trusted
// proxy that says so in X-Forwarded-Proto (its first value: the proxy facing the browser).
func (h *signIn) isHTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !h.fromTrustedProxy(r) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}
