# A static switchboard binary in an image of its own: no shell, no package
# manager, a non-root user, its data in the /data volume.
#
#   docker build -t switchboard .
#   docker run -p 8080:8080 -v switchboard-data:/data switchboard
#   docker exec CONTAINER switchboard --data /data whoami   # the operator's token is in /data/owner-token
#
# The binary is built by scripts/release, for the image's own platform,
# with the same flags as the released binaries. To stamp a release in:
#
#   docker build --build-arg VERSION=v1.2.3 --build-arg COMMIT="$(git rev-parse HEAD)" \
#     --build-arg SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)" -t switchboard .
#
# The server runs as a non-root user, so it listens on ports above 1023
# (8080 here): map the host's ports onto them, e.g. -p 80:8080. A server
# that also serves HTTPS itself listens on a high port for that too, e.g.
# --addr :8080 --https-addr :8443, mapped with -p 80:8080 -p 443:8443.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ARG SOURCE_DATE_EPOCH
RUN scripts/release --targets "$(go env GOOS)/$(go env GOARCH)" --commit "$COMMIT" --out /dist "$VERSION" \
 && mkdir /out && mv /dist/switchboard_* /out/switchboard

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
