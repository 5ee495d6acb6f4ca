package io.weft.reactive;

import java.util.concurrent.Flow;
import org.reactivestreams.Subscriber;

/**
 * A subscriber of either API, seen the same way by Weft's publishers: each subscription object
 * implements both {@link org.reactivestreams.Subscription} and {@link Flow.Subscription}, so the
 * only difference left is which {@code onSubscribe} to call.
 */
interface Sink<T> {

    /** Calls the subscriber's {@code onSubscribe} with {@code subscription}. */
    void onSubscribe(BothSubscription subscription);

    void onNext(T item);

    void onError(Throwable failure);

    void onComplete();

    /** A subscription usable as either API's: both declare exactly {@code request} and {@code cancel}. */
    interface BothSubscription extends org.reactivestreams.Subscription, Flow.Subscription {}

    static <T> Sink<T> of(Subscriber<? super T> subscriber) {
        return new Sink<>() {
            @Override
            public void onSubscribe(BothSubscription subscription) {
                subscriber.onSubscribe(subscription);
            }

            @Override
            public void onNext(T item) {
                subscriber.onNext(item);
            }

            @Override
            public void onError(Throwable failure) {
                subscriber.onError(failure);
            }

            @Override
            public void onComplete() {
                subscriber.onComplete();
            }
        };
    }

    static <T> Sink<T> of(Flow.Subscriber<? super T> subscriber) {
        return new Sink<>() {
            @Override
            public void onSubscribe(BothSubscription subscription) {
                subscriber.onSubscribe(subscription);
            }

            @Override
            public void onNext(T item) {
                subscriber.onNext(item);
            }

            @Override
            public void onError(Throwable failure) {
                subscriber.onError(failure);
            }

            @Override
            public void onComplete() {
                subscriber.onComplete();
            }
        };
    }
}
