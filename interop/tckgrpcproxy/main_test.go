package main

import (
	"encoding/binary"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/proto"
)

// frame is msg as one uncompressed gRPC message.
func frame(t *testing.T, msg proto.Message) []byte {
	b, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(b))), b...)
}

func TestWithTenant(t *testing.T) {
	fields, err := tenantFields()
	if err != nil {
		t.Fatal(err)
	}
	for path, tc := range map[string]struct {
		in, out interface {
			proto.Message
			GetTenant() string
		}
	}{
		"/lf.a2a.v1.A2AService/SendMessage":                     {&a2apb.SendMessageRequest{Tenant: "other", Message: &a2apb.Message{MessageId: "m1", TaskId: "t1"}}, &a2apb.SendMessageRequest{}},
		"/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs": {&a2apb.ListTaskPushNotificationConfigsRequest{TaskId: "t1"}, &a2apb.ListTaskPushNotificationConfigsRequest{}},
	} {
		num, ok := fields[path]
		if !ok {
			t.Fatalf("no tenant field for %s", path)
		}
		body, err := withTenant(frame(t, tc.in), num, "tck")
		if err != nil {
			t.Fatal(err)
		}
		if n := binary.BigEndian.Uint32(body[1:5]); int(n) != len(body)-5 {
			t.Fatalf("%s: frame length %d, message %d bytes", path, n, len(body)-5)
		}
		if err := proto.Unmarshal(body[5:], tc.out); err != nil {
			t.Fatal(err)
		}
		if tc.out.GetTenant() != "tck" {
			t.Errorf("%s: tenant %q, want tck", path, tc.out.GetTenant())
		}
		tc.in.ProtoReflect().Set(tc.in.ProtoReflect().Descriptor().Fields().ByName("tenant"), tc.out.ProtoReflect().Get(tc.out.ProtoReflect().Descriptor().Fields().ByName("tenant")))
		if !proto.Equal(tc.in, tc.out) {
			t.Errorf("%s: %v, want %v with the tenant set", path, tc.out, tc.in)
		}
	}
	if _, err := withTenant([]byte{0, 0, 0, 0, 9, 1}, 1, "tck"); err == nil {
		t.Error("a truncated message was taken")
	}
}
