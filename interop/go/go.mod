// Pins the a2a-go CLI (cmd/a2a) that interop/run.sh builds and uses as an
// outside A2A client. A separate module, so that the main module does not
// depend on the CLI; go.sum pins every dependency. The dependencies it
// shares with the main module are at the main module's versions, so that
// building the CLI reuses the packages the main module's builds compiled.
module github.com/switchboard-dev/switchboard/interop/go

go 1.26.0

tool github.com/a2aproject/a2a-go/v2/cmd/a2a

require (
	github.com/a2aproject/a2a-go v0.3.15 // indirect
	github.com/a2aproject/a2a-go/v2 v2.4.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260928230214-8a89bd6388cc // indirect
	google.golang.org/grpc v1.83.2 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
