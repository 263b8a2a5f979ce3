# A static switchboard binary in an image of its own: no shell, no package
# manager, a non-root user, its data in the /data volume.
#
#   docker build -t switchboard .
#   docker run -p 8080:8080 -v switchboard-data:/data switchboard
#   docker exec CONTAINER switchboard --data /data whoami   # the operator's token is in /data/owner-token
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/switchboard ./cmd/switchboard

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/switchboard /usr/local/bin/switchboard
USER nonroot:nonroot
VOLUME /data
ENV SWITCHBOARD_DATA=/data \
    SWITCHBOARD_ADDR=0.0.0.0:8080 \
    SWITCHBOARD_URL=http://127.0.0.1:8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/switchboard", "health"]
ENTRYPOINT ["/usr/local/bin/switchboard"]
CMD ["serve"]
