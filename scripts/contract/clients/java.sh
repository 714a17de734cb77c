# openapi-generator `java` (okhttp-gson, its default library): generates the client into a scratch
# Maven project, compiles it with the walk-through (test/clients/java) and runs it (sourced by
# scripts/contract/generated-clients.sh; `build` then `run`).

build_java() { # <scratch>
  echo "--- Java: openapi-generator $openapi_generator_version java"
  openapi_generator generate -g java -i generated/openapi.yaml -o "$1/java" \
    --invoker-package trellis --api-package trellis.api --model-package trellis.model >/dev/null
  cp test/clients/java/Walkthrough.java "$1/java/src/main/java/"
  # The generated pom targets Java 8; the walk-through is Java 17. package copies the dependencies
  # into target/lib (the pom's own execution), the walk-through's class path; tests, javadoc and
  # sources are skipped.
  (cd "$1/java" && mvn -q -B -Dstyle.color=never package -Dmaven.compiler.release=17 \
    -Dmaven.test.skip=true -Dmaven.javadoc.skip=true -Dmaven.source.skip=true)
}

run_java() { # <scratch>
  java -cp "$1/java/target/classes:$1/java/target/lib/*" Walkthrough
}
