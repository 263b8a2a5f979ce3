package netguard

import "testing"

func TestPrivateHost(t *testing.T) {
	for host, want := range map[string]bool{
		"agent.example.com": false, "93.184.216.34": false, "2606:4700::1111": false,
		"localhost": true, "box.localhost": true, "printer.local": true, "nas.lan": true, "db.internal": true,
		"x.corp": true, "router.home.arpa": true, "laptop.tail1234.ts.net": true, "intranet": true,
		"10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true, "127.0.0.1": true, "169.254.169.254": true,
		"100.64.0.1": true, "::1": true, "fd00::1": true, "fe80::1": true, "::": true, "::ffff:10.0.0.1": true,
		"127.1": true, "0x7f.0.0.1": true, "2130706433": true, "ｅxample．com": true, "": true,
	} {
		if got := PrivateHost(host); got != want {
			t.Errorf("PrivateHost(%q) = %v, want %v", host, got, want)
		}
	}
}
