package browserpool

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestNetworkRulesDecideByNameWildcardAddressAndDefault(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "rebind.example":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "mixed.example":
			return []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("8.8.8.8")}, nil
		case "zero.example":
			return []netip.Addr{netip.MustParseAddr("0.0.0.0")}, nil
		case "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	cases := []struct {
		policy  NetworkPolicy
		host    string
		refused string // substring of the rule, "" for allowed
	}{
		{NetworkPolicy{}, "example.com", ""},
		{NetworkPolicy{}, "localhost", ""},
		{NetworkPolicy{}, "127.0.0.1", ""},
		{NetworkPolicy{}, "[::1]", ""},
		{NetworkPolicy{}, "169.254.169.254", "link-local"},
		{NetworkPolicy{}, "[fe80::1]", "link-local"},
		{NetworkPolicy{}, "[::ffff:169.254.169.254]", "link-local"},
		{NetworkPolicy{}, "[fd00:ec2::254]", "link-local"},
		{NetworkPolicy{}, "[fd00:ec2::23]", "link-local"},
		{NetworkPolicy{}, "[fd20:ce::254]", "link-local"},
		{NetworkPolicy{}, "100.100.100.200", "link-local"},
		{NetworkPolicy{}, "168.63.129.16", "link-local"},
		{NetworkPolicy{}, "[fd00:ec3::254]", ""},
		{NetworkPolicy{}, "metadata.google.internal", "cloud-metadata hosts"},
		{NetworkPolicy{}, "METADATA.google.internal.", "cloud-metadata hosts"},
		{NetworkPolicy{}, "rebind.example", "link-local"},
		{NetworkPolicy{Allow: []string{"rebind.example"}}, "rebind.example", "link-local"},
		{NetworkPolicy{Allow: []string{"169.254.169.254"}}, "169.254.169.254", ""},
		{NetworkPolicy{Allow: []string{"metadata.google.internal"}}, "metadata.google.internal", ""},
		{NetworkPolicy{Block: []string{"*.example.com"}}, "a.b.example.com", `"*.example.com"`},
		{NetworkPolicy{Block: []string{"*.example.com"}}, "example.com", ""},
		{NetworkPolicy{Block: []string{"*.example.com"}}, "badexample.com", ""},
		{NetworkPolicy{Block: []string{"Example.COM"}}, "example.com", `"Example.COM"`},
		{NetworkPolicy{Block: []string{"10.0.0.0/8"}}, "mixed.example", `"10.0.0.0/8"`},
		{NetworkPolicy{Block: []string{"127.0.0.0/8", "::1", "localhost"}}, "localhost", "localhost"},
		{NetworkPolicy{Block: []string{"127.0.0.0/8", "::1", "localhost"}}, "127.0.0.1", "127.0.0.0/8"},
		// The unspecified addresses reach this machine; IPv4 in IPv6 reaches
		// the IPv4 address.
		{NetworkPolicy{}, "0.0.0.0", ""},
		{NetworkPolicy{Block: []string{"127.0.0.0/8", "::1", "localhost"}}, "0.0.0.0", "0.0.0.0, which reaches 127.0.0.1"},
		{NetworkPolicy{Block: []string{"127.0.0.0/8", "::1", "localhost"}}, "0.1.2.3", "127.0.0.0/8"},
		{NetworkPolicy{Block: []string{"127.0.0.0/8", "::1", "localhost"}}, "[::ffff:0.0.0.0]", "127.0.0.0/8"},
		{NetworkPolicy{Block: []string{"127.0.0.0/8", "::1", "localhost"}}, "zero.example", "127.0.0.0/8"},
		{NetworkPolicy{Block: []string{"127.0.0.0/8"}}, "[::]", `"127.0.0.0/8" (:: is ::, which reaches 127.0.0.1)`},
		{NetworkPolicy{Block: []string{"::1"}}, "0.0.0.0", `"::1"`},
		{NetworkPolicy{Allow: []string{"example.com"}}, "0.0.0.0", "Network.Allow"},
		{NetworkPolicy{}, "[64:ff9b::a9fe:a9fe]", "link-local"},
		{NetworkPolicy{}, "[::a9fe:a9fe]", "link-local"},
		{NetworkPolicy{Block: []string{"10.0.0.0/8"}}, "[64:ff9b::10.0.0.5]", "10.0.0.0/8"},
		{NetworkPolicy{}, "[64:ff9b::808:808]", ""},
		{NetworkPolicy{Allow: []string{"example.com"}}, "example.com", ""},
		{NetworkPolicy{Allow: []string{"example.com"}}, "other.com", "Network.Allow"},
		{NetworkPolicy{Allow: []string{"example.com"}, Block: []string{"example.com"}}, "example.com", "Network.Block[0]"},
		{NetworkPolicy{Allow: []string{"8.8.8.8"}}, "mixed.example", "Network.Allow"},
	}
	for _, c := range cases {
		pol, err := c.policy.compile()
		if err != nil {
			t.Fatalf("%+v: %v", c.policy, err)
		}
		v, err := pol.decide(context.Background(), lookup, c.host)
		if err != nil {
			t.Errorf("%+v %s: %v", c.policy, c.host, err)
			continue
		}
		switch {
		case c.refused == "" && v.rule != "":
			t.Errorf("%+v: %s refused by %s, want allowed", c.policy, c.host, v.rule)
		case c.refused != "" && !strings.Contains(v.rule, c.refused):
			t.Errorf("%+v: %s rule %q, want refused naming %s", c.policy, c.host, v.rule, c.refused)
		case c.refused == "" && len(v.addrs) == 0:
			t.Errorf("%+v: %s allowed with no address to dial", c.policy, c.host)
		}
	}
}

func TestAnUnresolvableHostIsAnErrorNotARefusal(t *testing.T) {
	pol, _ := NetworkPolicy{}.compile()
	_, err := pol.decide(context.Background(), func(context.Context, string) ([]netip.Addr, error) {
		return nil, errors.New("no such host")
	}, "nowhere.invalid")
	if err == nil {
		t.Fatal("decide on an unresolvable host: nil error")
	}
}
