package io.weft.reactive.tck;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.reactivestreams.tck.PublisherVerification;

/**
 * Runs each Reactive Streams TCK class of this package (TestNG) through the JUnit Platform
 * launcher and pins its outcome: no rule fails, exactly the expected number of rules pass, and
 * exactly the expected rules are skipped, each for the expected reason. A TCK that silently runs
 * fewer tests (TestNG that cannot start, a class TestNG no longer recognises, a rule the TCK turns
 * into a skip) fails the build here instead of passing green.
 *
 * <p>The TCK classes are named {@code *Tck} so that Surefire does not pick them up on its own;
 * they run only through this test. The variant per Io is a top-level class: given a nested
 * class, TestNG also runs its sibling nested classes (this guard caught twice the expected count).
 * When the TCK or the adapters change, the counts below are re-measured, and each new skipped
 * rule gets its reason.
 */
class ReactiveStreamsTckTest {

    // ---------------------------------------------------------------- why rules are skipped

    /** The TCK's own "untested" publisher rules: it cannot check them, for any publisher. */
    private static final Map<String, String> UNTESTED_PUBLISHER_RULES = rules(
            "Not verified by this TCK.",
            "untested_spec106_mustConsiderSubscriptionCancelledAfterOnErrorOrOnCompleteHasBeenCalled",
            "untested_spec107_mustNotEmitFurtherSignalsOnceOnErrorHasBeenSignalled",
            "untested_spec108_possiblyCanceledSubscriptionShouldNotReceiveOnErrorOrOnCompleteSignals",
            "untested_spec109_subscribeShouldNotThrowNonFatalThrowable",
            "untested_spec110_rejectASubscriptionRequestIfTheSameSubscriberSubscribesTwice",
            "untested_spec304_requestShouldNotPerformHeavyComputations",
            "untested_spec305_cancelMustNotSynchronouslyPerformHeavyComputation");

    /** The rules that need more than one item, which a future publisher cannot give. */
    private static final Map<String, String> NEEDS_MORE_THAN_ONE_ITEM = rules(
            "Unable to run this test, as required elements nr: ",
            "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
            "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
            "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
            "optional_spec309_requestNegativeNumberMaySignalIllegalArgumentExceptionWithSpecificMessage",
            "required_createPublisher3MustProduceAStreamOfExactly3Elements",
            "required_spec101_subscriptionRequestMustResultInTheCorrectNumberOfProducedElements",
            "required_spec102_maySignalLessThanRequestedAndTerminateSubscription",
            "required_spec105_mustSignalOnCompleteWhenFiniteStreamTerminates",
            "required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe",
            "required_spec303_mustNotAllowUnboundedRecursion",
            "required_spec306_afterSubscriptionIsCancelledRequestMustBeNops",
            "required_spec309_requestNegativeNumberMustSignalIllegalArgumentException",
            "required_spec309_requestZeroMustSignalIllegalArgumentException",
            "required_spec312_cancelMustMakeThePublisherToEventuallyStopSignaling",
            "required_spec313_cancelMustMakeThePublisherEventuallyDropAllReferencesToTheSubscriber",
            "required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue",
            "required_spec317_mustSupportACumulativePendingElementCountUpToLongMaxValue",
            "required_spec317_mustSupportAPendingElementCountUpToLongMaxValue",
            "stochastic_spec103_mustSignalOnMethodsSequentially");

    /** fromChannel is not multicast: see {@link FromChannelTck#SHARES_ITEMS}. */
    private static final Map<String, String> MULTICAST_RULES = rules(
            FromChannelTck.SHARES_ITEMS,
            "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
            "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
            "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne");

    /** A channel publisher on BlockingIo cannot fail (a channel cannot, and BlockingIo cannot close). */
    private static final Map<String, String> FAILED_PUBLISHER_RULES = rules(
            PublisherVerification.SKIPPING_NO_ERROR_PUBLISHER_AVAILABLE,
            "optional_spec104_mustSignalOnErrorWhenFails",
            "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe");

    /** The TCK's own "untested" subscriber rules (blackbox). */
    private static final Map<String, String> UNTESTED_SUBSCRIBER_RULES = rules(
            "Not verified using this TCK.",
            "untested_spec202_blackbox_shouldAsynchronouslyDispatch",
            "untested_spec204_blackbox_mustConsiderTheSubscriptionAsCancelledInAfterRecievingOnCompleteOrOnError",
            "untested_spec206_blackbox_mustCallSubscriptionCancelIfItIsNoLongerValid",
            "untested_spec207_blackbox_mustEnsureAllCallsOnItsSubscriptionTakePlaceFromTheSameThreadOrTakeCareOfSynchronization",
            "untested_spec208_blackbox_mustBePreparedToReceiveOnNextSignalsAfterHavingCalledSubscriptionCancel",
            "untested_spec211_blackbox_mustMakeSureThatAllCallsOnItsMethodsHappenBeforeTheProcessingOfTheRespectiveEvents",
            "untested_spec212_blackbox_mustNotCallOnSubscribeMoreThanOnceBasedOnObjectEquality",
            "untested_spec213_blackbox_failingOnSignalInvocation",
            "untested_spec301_blackbox_mustNotBeCalledOutsideSubscriberContext",
            "untested_spec308_blackbox_requestMustRegisterGivenNumberElementsToBeProduced",
            "untested_spec310_blackbox_requestMaySynchronouslyCallOnNextOnSubscriber",
            "untested_spec311_blackbox_requestMaySynchronouslyCallOnCompleteOrOnError",
            "untested_spec314_blackbox_cancelMayCauseThePublisherToShutdownIfNoOtherSubscriptionExists",
            "untested_spec315_blackbox_cancelMustNotThrowExceptionAndMustSignalOnError",
            "untested_spec316_blackbox_requestMustNotThrowExceptionAndMustOnErrorTheSubscriber");

    /** The TCK's own "untested" subscriber rules (whitebox). */
    private static final Map<String, String> UNTESTED_WHITEBOX_RULES = rules(
            "Not verified using this TCK.",
            "untested_spec202_shouldAsynchronouslyDispatch",
            "untested_spec204_mustConsiderTheSubscriptionAsCancelledInAfterRecievingOnCompleteOrOnError",
            "untested_spec206_mustCallSubscriptionCancelIfItIsNoLongerValid",
            "untested_spec207_mustEnsureAllCallsOnItsSubscriptionTakePlaceFromTheSameThreadOrTakeCareOfSynchronization",
            "untested_spec211_mustMakeSureThatAllCallsOnItsMethodsHappenBeforeTheProcessingOfTheRespectiveEvents",
            "untested_spec212_mustNotCallOnSubscribeMoreThanOnceBasedOnObjectEquality_specViolation",
            "untested_spec213_failingOnSignalInvocation",
            "untested_spec301_mustNotBeCalledOutsideSubscriberContext",
            "untested_spec310_requestMaySynchronouslyCallOnNextOnSubscriber",
            "untested_spec311_requestMaySynchronouslyCallOnCompleteOrOnError",
            "untested_spec314_cancelMayCauseThePublisherToShutdownIfNoOtherSubscriptionExists",
            "untested_spec315_cancelMustNotThrowExceptionAndMustSignalOnError",
            "untested_spec316_requestMustNotThrowExceptionAndMustOnErrorTheSubscriber");

    // ---------------------------------------------------------------- what each class must do

    static Stream<Expected> tcks() {
        // PublisherVerification has 38 rules, SubscriberBlackboxVerification 26, SubscriberWhiteboxVerification 27.
        Map<String, String> producer = UNTESTED_PUBLISHER_RULES;
        Map<String, String> future = union(UNTESTED_PUBLISHER_RULES, NEEDS_MORE_THAN_ONE_ITEM);
        Map<String, String> channelOnFiberIo = union(UNTESTED_PUBLISHER_RULES, MULTICAST_RULES);
        Map<String, String> channelOnBlockingIo = union(channelOnFiberIo, FAILED_PUBLISHER_RULES);
        return Stream.of(
                new Expected(ProduceOnBlockingIoTck.class, 31, producer),
                new Expected(ProduceOnFiberIoTck.class, 31, producer),
                new Expected(FromFutureOnBlockingIoTck.class, 12, future),
                new Expected(FromFutureOnFiberIoTck.class, 12, future),
                new Expected(FromChannelOnBlockingIoTck.class, 26, channelOnBlockingIo),
                new Expected(FromChannelOnFiberIoTck.class, 28, channelOnFiberIo),
                new Expected(FlowProduceOnBlockingIoTck.class, 31, producer),
                new Expected(FlowProduceOnFiberIoTck.class, 31, producer),
                new Expected(FlowFromFutureOnBlockingIoTck.class, 12, future),
                new Expected(FlowFromFutureOnFiberIoTck.class, 12, future),
                new Expected(FlowFromChannelOnBlockingIoTck.class, 26, channelOnBlockingIo),
                new Expected(FlowFromChannelOnFiberIoTck.class, 28, channelOnFiberIo),
                new Expected(FromStageOnBlockingIoTck.class, 12, future),
                new Expected(FromStageOnFiberIoTck.class, 12, future),
                new Expected(FromPendingFutureOnFiberIoTck.class, 12, future),
                new Expected(FromPendingFutureOnVirtualFiberIoTck.class, 12, future),
                new Expected(ProduceOnVirtualBlockingIoTck.class, 31, producer),
                new Expected(ProduceOnVirtualFiberIoTck.class, 31, producer),
                new Expected(FromChannelOnVirtualFiberIoTck.class, 28, channelOnFiberIo),
                new Expected(FromChannelWithHookOnFiberIoTck.class, 28, channelOnFiberIo),
                new Expected(InboxTck.class, 11, UNTESTED_SUBSCRIBER_RULES),
                new Expected(FlowInboxTck.class, 11, UNTESTED_SUBSCRIBER_RULES),
                new Expected(InboxWhiteboxTck.class, 14, UNTESTED_WHITEBOX_RULES),
                new Expected(FlowInboxWhiteboxTck.class, 14, UNTESTED_WHITEBOX_RULES));
    }

    /**
     * What one TCK class must do: exactly {@code passed} rules pass, and exactly the rules of
     * {@code skipped} are skipped, each with a reason that starts as given.
     */
    record Expected(Class<?> tck, int passed, Map<String, String> skipped) {
        @Override
        public String toString() {
            return tck.getSimpleName();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tcks")
    @Timeout(value = 120, unit = TimeUnit.SECONDS) // a whole TCK class, not one rule
    void passesEveryRuleThatApplies(Expected expected) {
        Outcomes outcomes = new Outcomes();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(expected.tck()))
                .filters(EngineFilter.includeEngines("testng"))
                .build();
        long start = System.nanoTime();
        LauncherFactory.create().execute(request, summary, outcomes);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        System.out.println(expected + ": " + outcomes.passed.get() + " passed, " + outcomes.skipped.size()
                + " skipped, " + outcomes.failed.size() + " failed, in " + ms + " ms");
        new TreeMap<>(outcomes.skipped).forEach((rule, why) -> System.out.println("  skipped " + rule + ": " + why));
        new TreeMap<>(outcomes.failed).forEach((rule, why) -> System.out.println("  FAILED " + rule + ": " + why));

        Map<String, String> skippedFor = new TreeMap<>(outcomes.skipped);
        Map<String, String> skippedExpectedFor = new TreeMap<>(expected.skipped());
        skippedFor.replaceAll((rule, why) -> {
            String reason = skippedExpectedFor.get(rule);
            return reason != null && why.startsWith(reason) ? reason : why;
        });
        assertAll(
                () -> assertEquals(Map.of(), new TreeMap<>(outcomes.failed), "rules (or TCK classes) that failed"),
                () -> assertEquals(0, summary.getSummary().getTotalFailureCount(), "failures the summary counted"),
                () -> assertEquals(expected.passed(), outcomes.passed.get(), "rules that passed"),
                () -> assertEquals(
                        summary.getSummary().getTestsSucceededCount(),
                        outcomes.passed.get(),
                        "rules that passed, as the summary counted them"),
                () -> assertEquals(skippedExpectedFor, skippedFor, "rules that were skipped, and why"));
    }

    // ---------------------------------------------------------------- plumbing

    /**
     * Records each test's outcome by rule (method) name. The TestNG engine reports a rule that
     * throws SkipException as aborted, with the exception's message as the reason.
     */
    static final class Outcomes implements TestExecutionListener {
        final AtomicInteger passed = new AtomicInteger();
        final ConcurrentMap<String, String> skipped = new ConcurrentHashMap<>();
        final ConcurrentMap<String, String> failed = new ConcurrentHashMap<>();

        @Override
        public void executionSkipped(TestIdentifier test, String reason) {
            skipped.put(rule(test), String.valueOf(reason));
        }

        @Override
        public void executionFinished(TestIdentifier test, TestExecutionResult result) {
            switch (result.getStatus()) {
                case SUCCESSFUL -> {
                    if (test.isTest()) {
                        passed.incrementAndGet();
                    }
                }
                case ABORTED ->
                    skipped.put(
                            rule(test),
                            result.getThrowable().map(Throwable::getMessage).orElse("aborted without a reason"));
                case FAILED ->
                    failed.put(
                            rule(test),
                            result.getThrowable()
                                    .map(ReactiveStreamsTckTest::trace)
                                    .orElse("failed without an exception"));
            }
        }

        private static String rule(TestIdentifier test) {
            return test.getSource()
                    .filter(org.junit.platform.engine.support.descriptor.MethodSource.class::isInstance)
                    .map(source -> ((org.junit.platform.engine.support.descriptor.MethodSource) source).getMethodName())
                    .orElse(test.getDisplayName());
        }
    }

    private static Map<String, String> rules(String reason, String... names) {
        return Stream.of(names).collect(Collectors.toUnmodifiableMap(name -> name, name -> reason));
    }

    private static Map<String, String> union(Map<String, String> a, Map<String, String> b) {
        Map<String, String> both = new TreeMap<>(a);
        b.forEach((rule, reason) -> {
            if (both.putIfAbsent(rule, reason) != null) {
                throw new IllegalArgumentException(rule + " is skipped for two reasons");
            }
        });
        return Map.copyOf(both);
    }

    private static String trace(Throwable failure) {
        StringWriter out = new StringWriter();
        failure.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
