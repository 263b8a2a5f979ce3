// Command tckgrpcproxy puts an agent's gRPC binding where the a2a-tck
// suite's gRPC client can reach it. That client sends no tenant, and
// Switchboard's gRPC binding names the agent by the request's tenant (one
// listener serves every agent); and it dials the host and port of an
// interface URL that has a scheme, while the card lists the gRPC interface
// as host:port (the form gRPC clients such as a2a-go's dial). So the proxy
//
//   - sets the tenant of every gRPC request message to -tenant, appending
//     the field to the message's bytes (the last value of a field wins);
//   - rewrites the gRPC interface of the card at
//     /.well-known/agent-card.json to http://LISTEN (itself);
//   - passes every other request, and every response, on as it is.
//
// It speaks HTTP/1.1 and h2c on one loopback port and h2c to the target.
// Loopback only; for tests.
//
//	tckgrpcproxy -listen 127.0.0.1:18092 -target http://127.0.0.1:18090 -tenant tck
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"

	_ "github.com/a2aproject/a2a-go/v2/a2apb/v1" // registers the A2A 1.0 proto
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

const service = "lf.a2a.v1.A2AService"

func main() {
	listen := flag.String("listen", "127.0.0.1:18092", "address to listen on (loopback)")
	target := flag.String("target", "http://127.0.0.1:8080", "Switchboard base URL")
	tenant := flag.String("tenant", "tck", "the tenant to set on every gRPC request: the agent's handle")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatal(err)
	}
	fields, err := tenantFields()
	if err != nil {
		log.Fatal(err)
	}

	plain := httputil.NewSingleHostReverseProxy(u)
	plain.FlushInterval = -1
	plain.ModifyResponse = func(res *http.Response) error {
		if res.Request.URL.Path != "/.well-known/agent-card.json" || res.StatusCode != http.StatusOK {
			return nil
		}
		return rewriteCard(res, "http://"+*listen)
	}

	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	grpcProxy := httputil.NewSingleHostReverseProxy(u)
	grpcProxy.Transport = h2c
	grpcProxy.FlushInterval = -1

	srv := &http.Server{Addr: *listen, Protocols: new(http.Protocols),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor != 2 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
				plain.ServeHTTP(w, r)
				return
			}
			num, ok := fields[r.URL.Path]
			if !ok {
				http.Error(w, "unknown gRPC method "+r.URL.Path, http.StatusNotFound)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body, err = withTenant(body, num, *tenant)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			r.Header.Del("Content-Length")
			grpcProxy.ServeHTTP(w, r)
		})}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	log.Fatal(srv.ListenAndServe())
}

// tenantFields maps the path of each method of the A2A service to the
// field number of its request message's tenant.
func tenantFields() (map[string]protowire.Number, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(service)
	if err != nil {
		return nil, err
	}
	methods := d.(protoreflect.ServiceDescriptor).Methods()
	fields := make(map[string]protowire.Number, methods.Len())
	for i := range methods.Len() {
		m := methods.Get(i)
		f := m.Input().Fields().ByName("tenant")
		if f == nil {
			return nil, fmt.Errorf("%s: its request %s has no tenant", m.Name(), m.Input().FullName())
		}
		fields["/"+service+"/"+string(m.Name())] = f.Number()
	}
	return fields, nil
}

// withTenant appends the tenant field to each uncompressed message of a
// gRPC request body (5-byte frame header, then the message).
func withTenant(body []byte, num protowire.Number, tenant string) ([]byte, error) {
	var out []byte
	for len(body) > 0 {
		if len(body) < 5 {
			return nil, errors.New("truncated gRPC frame header")
		}
		flag, n := body[0], binary.BigEndian.Uint32(body[1:5])
		if uint64(len(body)-5) < uint64(n) {
			return nil, errors.New("truncated gRPC message")
		}
		msg := body[5 : 5+n]
		if flag == 0 {
			msg = protowire.AppendString(protowire.AppendTag(append([]byte(nil), msg...), num, protowire.BytesType), tenant)
		}
		out = append(out, flag)
		out = binary.BigEndian.AppendUint32(out, uint32(len(msg)))
		out = append(out, msg...)
		body = body[5+n:]
	}
	return out, nil
}

// rewriteCard points the card's gRPC interfaces at base.
func rewriteCard(res *http.Response, base string) error {
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	var card map[string]any
	if err := json.Unmarshal(raw, &card); err != nil {
		return err
	}
	ifaces, _ := card["supportedInterfaces"].([]any)
	for _, i := range ifaces {
		if iface, ok := i.(map[string]any); ok && iface["protocolBinding"] == "GRPC" {
			iface["url"] = base
		}
	}
	raw, err = json.Marshal(card)
	if err != nil {
		return err
	}
	res.Body = io.NopCloser(bytes.NewReader(raw))
	res.ContentLength = int64(len(raw))
	res.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	res.Header.Del("ETag")
	return nil
}
